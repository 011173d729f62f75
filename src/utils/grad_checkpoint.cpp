#include <algorithm>
#include <utility>

#include "autograd/function.h"
#include "core/switches.h"
#include "ember/autograd.h"
#include "ember/random.h"
#include "ember/utils/checkpoint.h"

namespace ember::utils {

namespace {

// The default generators of the devices fn may draw from, with the states fn started from.
using RngStates = std::vector<std::pair<Generator, GeneratorState>>;

RngStates capture(const TensorList& inputs) {
  std::vector<Device> devices{Device(kCPU)};
  for (const Tensor& t : inputs) {
    if (t.defined() && t.is_cuda() &&
        std::find(devices.begin(), devices.end(), t.device()) == devices.end()) {
      devices.push_back(t.device());
    }
  }
  RngStates states;
  for (Device d : devices) {
    Generator g = default_generator(d);
    states.emplace_back(g, g.get_state());
  }
  return states;
}

// Sets the captured states for the scope, then puts the generators back where they were (so the
// recomputation does not disturb the random stream of the surrounding code).
class RngFork {
 public:
  explicit RngFork(const RngStates& states) : states_(states) {
    for (const auto& [g, s] : states_) {
      now_.push_back(g.get_state());
      Generator(g).set_state(s);
    }
  }
  ~RngFork() {
    for (size_t i = 0; i < states_.size(); ++i) Generator(states_[i].first).set_state(now_[i]);
  }
  RngFork(const RngFork&) = delete;
  RngFork& operator=(const RngFork&) = delete;

 private:
  const RngStates& states_;
  std::vector<GeneratorState> now_;
};

}  // namespace

TensorList checkpoint(const std::function<TensorList(const TensorList&)>& fn,
                      const TensorList& inputs, bool preserve_rng_state) {
  if (!fn) throw ValueError("[checkpoint] fn is empty");
  if (!is_grad_enabled()) return fn(inputs);

  RngStates rng = preserve_rng_state ? capture(inputs) : RngStates{};
  const AutocastState autocast = t_autocast;  // the recomputation casts as this pass does
  TensorList outputs;
  {
    NoGradGuard no_grad;
    TensorList detached;
    detached.reserve(inputs.size());
    for (const Tensor& t : inputs) detached.push_back(t.defined() ? t.detach() : t);
    outputs = fn(detached);
  }

  // Only the defined inputs are saved; `slots` maps them back to their positions.
  TensorList saved;
  std::vector<size_t> slots;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].defined()) {
      saved.push_back(inputs[i]);
      slots.push_back(i);
    }
  }
  const size_t n = inputs.size();
  autograd::record(
      "CheckpointFunctionBackward", inputs, outputs, saved,
      [fn, rng = std::move(rng), autocast, slots, n](
          const TensorList& grads, const autograd::GradContext& ctx) -> TensorList {
        if (is_grad_enabled()) {
          throw NotImplementedError(
              "[checkpoint] backward with create_graph=true (higher-order gradients) is not "
              "supported through checkpoint");
        }
        TensorList args(n);
        for (size_t k = 0; k < slots.size(); ++k) {
          Tensor d = ctx.saved[k].detach();
          if (ctx.needs(slots[k])) d.requires_grad_(true);
          args[slots[k]] = d;
        }
        TensorList outs;
        {
          RngFork fork(rng);
          EnableGradGuard grad_mode;
          AutocastReplayGuard replay(autocast);
          outs = fn(args);
        }
        if (outs.size() != grads.size()) {
          throw ValueError("[checkpoint] fn returned " + std::to_string(grads.size()) +
                           " outputs in forward but " + std::to_string(outs.size()) +
                           " when recomputed");
        }
        TensorList roots, root_grads;
        for (size_t j = 0; j < outs.size(); ++j) {
          if (outs[j].defined() && outs[j].requires_grad() && grads[j].defined()) {
            roots.push_back(outs[j]);
            root_grads.push_back(grads[j]);
          }
        }
        if (!roots.empty()) autograd::backward(roots, root_grads);
        TensorList result(n);
        for (size_t i = 0; i < n; ++i) {
          if (ctx.needs(i)) result[i] = args[i].grad();
        }
        return result;
      });
  return outputs;
}

Tensor checkpoint(const std::function<Tensor(const Tensor&)>& fn, const Tensor& input,
                  bool preserve_rng_state) {
  if (!fn) throw ValueError("[checkpoint] fn is empty");
  return checkpoint([fn](const TensorList& in) { return TensorList{fn(in[0])}; }, TensorList{input},
                    preserve_rng_state)[0];
}

}  // namespace ember::utils

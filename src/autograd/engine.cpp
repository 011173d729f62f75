// The backward engine: dependency-counted topological execution of the graph on the calling
// thread, newest node first among the ready ones (PyTorch's order on one device). No recursion:
// discovery and execution use explicit stacks and queues.
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "autograd/function.h"
#include "core/record_scope.h"
#include "core/switches.h"
#include "core/tensor_util.h"

namespace ember::autograd {

namespace {

bool expandable_to(const Shape& from, const Shape& to) {
  if (from.size() < to.size()) return false;
  const size_t lead = from.size() - to.size();
  for (size_t i = 0; i < to.size(); ++i) {
    if (to[i] != from[lead + i] && to[i] != 1) return false;
  }
  return true;
}

// Brings a gradient to the shape, dtype and device its receiver expects.
Tensor validate(const Node& producer, size_t index, Tensor g, const GradMeta& want) {
  if (g.sizes() != want.shape) {
    if (!expandable_to(g.sizes(), want.shape)) {
      throw Error("[backward] Function " + producer.name() +
                  " returned an invalid gradient at "
                  "index " +
                  std::to_string(index) + " - got " + shape_str(g) +
                  " but expected shape compatible with " + shape_str(want.shape));
    }
    g = sum_to(g, want.shape);
  }
  if (g.dtype() != want.dtype || g.device() != want.device) g = g.to(want.device, want.dtype);
  return g;
}

struct ByNewest {
  bool operator()(const Node* a, const Node* b) const {
    return a->sequence_nr() < b->sequence_nr();
  }
};

// Runs the graph from roots. captures: edges whose incoming gradient is returned instead of
// accumulated (autograd::grad); then only the nodes on a path to a capture run.
TensorList execute(const std::vector<Edge>& roots, TensorList root_grads, bool keep_graph,
                   bool create_graph, const std::vector<Edge>& captures) {
  // Backward formulas run in the dtypes the forward pass chose: autocast never casts them (as in
  // PyTorch, whose backward kernels sit below its autocast layer).
  AutocastExcludeGuard no_autocast;
  struct GradModeScope {
    bool prev = is_grad_enabled();
    ~GradModeScope() { set_grad_enabled(prev); }
  } scope;
  set_grad_enabled(create_graph);

  // Dependencies: how many edges point at each node.
  std::unordered_map<Node*, int> deps;
  std::vector<Node*> order;  // discovery order, for the capture pass below
  {
    std::unordered_set<Node*> seen;
    std::vector<Node*> stack;
    for (const Edge& e : roots) {
      if (e.fn && seen.insert(e.fn.get()).second) stack.push_back(e.fn.get());
    }
    while (!stack.empty()) {
      Node* n = stack.back();
      stack.pop_back();
      order.push_back(n);
      for (const Edge& e : n->next_edges()) {
        if (!e.fn) continue;
        ++deps[e.fn.get()];
        if (seen.insert(e.fn.get()).second) stack.push_back(e.fn.get());
      }
    }
  }

  // With captures, a node runs only when one of its children leads to a capture.
  std::unordered_set<Node*> leads;  // nodes that are, or lead to, a capture
  std::unordered_set<Node*> runs;
  if (!captures.empty()) {
    for (const Edge& c : captures) {
      if (c.fn) leads.insert(c.fn.get());
    }
    // Children first: iterate to a fixed point over the discovered nodes (post-order by stack).
    std::vector<std::pair<Node*, size_t>> stack;
    std::unordered_set<Node*> done;
    for (const Edge& e : roots) {
      if (e.fn) stack.push_back({e.fn.get(), 0});
    }
    while (!stack.empty()) {
      auto& [n, i] = stack.back();
      if (done.count(n)) {
        stack.pop_back();
        continue;
      }
      const auto& edges = n->next_edges();
      if (i < edges.size()) {
        Node* c = edges[i++].fn.get();
        if (c && !done.count(c)) stack.push_back({c, 0});
        continue;
      }
      for (const Edge& e : edges) {
        if (e.fn && leads.count(e.fn.get())) {
          runs.insert(n);
          leads.insert(n);
          break;
        }
      }
      done.insert(n);
      stack.pop_back();
    }
  }

  std::unordered_map<Node*, TensorList> buffers;
  auto add_grad = [&](Node* n, uint32_t nr, Tensor g) {
    TensorList& buf = buffers[n];
    if (buf.size() < n->grad_meta().size()) buf.resize(n->grad_meta().size());
    if (nr >= buf.size()) buf.resize(nr + 1);
    Tensor& slot = buf[nr];
    slot = slot.defined() ? slot + g : std::move(g);
  };

  std::priority_queue<Node*, std::vector<Node*>, ByNewest> ready;
  for (size_t i = 0; i < roots.size(); ++i) {
    if (roots[i].fn) add_grad(roots[i].fn.get(), roots[i].input_nr, root_grads[i]);
  }
  {
    std::unordered_set<Node*> queued;
    for (const Edge& e : roots) {
      if (e.fn && deps[e.fn.get()] == 0 && queued.insert(e.fn.get()).second) ready.push(e.fn.get());
    }
  }

  TensorList captured(captures.size());
  while (!ready.empty()) {
    Node* n = ready.top();
    ready.pop();
    TensorList grads;
    if (auto it = buffers.find(n); it != buffers.end()) {
      grads = std::move(it->second);
      buffers.erase(it);
    }
    grads.resize(n->grad_meta().size());
    n->run_tensor_hooks(grads);
    for (size_t i = 0; i < captures.size(); ++i) {
      if (captures[i].fn.get() == n && captures[i].input_nr < grads.size()) {
        captured[i] = grads[captures[i].input_nr];
      }
    }
    if (!captures.empty() && !runs.count(n)) continue;

    bool any = false;
    for (const Tensor& g : grads) any = any || g.defined();
    TensorList outs;
    if (any) {
      // The backward range carries the forward op's sequence number (profiler's link).
      record::Scope range;
      if (record::active()) [[unlikely]] {
        std::vector<const Tensor*> in;
        for (const Tensor& g : grads) in.push_back(&g);
        range.begin(n->name(), record::Kind::backward, n->sequence_nr(), in.data(), in.size());
      }
      outs = n->apply(std::move(grads));
      if (!keep_graph) n->release_variables();
    }
    const auto& edges = n->next_edges();
    for (size_t i = 0; i < edges.size(); ++i) {
      const Edge& e = edges[i];
      if (!e.fn) continue;
      if (i < outs.size() && outs[i].defined()) {
        add_grad(e.fn.get(), e.input_nr,
                 validate(*n, i, std::move(outs[i]), e.fn->grad_meta()[e.input_nr]));
      }
      if (--deps[e.fn.get()] == 0) ready.push(e.fn.get());
    }
  }
  return captured;
}

// Roots and their starting gradients, with PyTorch's checks.
void prepare_roots(const char* op, const TensorList& outputs, const TensorList& grad_outputs,
                   std::vector<Edge>& roots, TensorList& grads) {
  if (!grad_outputs.empty() && grad_outputs.size() != outputs.size()) {
    throw ValueError(op_prefix(op) + "got " + std::to_string(grad_outputs.size()) +
                     " gradients for " + std::to_string(outputs.size()) + " outputs");
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& out = outputs[i];
    if (!out.defined() || !requires_grad(out)) {
      throw Error(op_prefix(op) + "element " + std::to_string(i) +
                  " of tensors does not require grad and does not have a grad_fn");
    }
    Tensor g = i < grad_outputs.size() ? grad_outputs[i] : Tensor();
    if (!g.defined()) {
      if (out.numel() != 1) {
        throw Error(op_prefix(op) + "grad can be implicitly created only for scalar outputs");
      }
      g = no_grad([&] { return make_empty(out.sizes(), out.options()).fill_(1); });
    } else if (g.sizes() != out.sizes()) {
      throw ValueError(op_prefix(op) + "Mismatch in shape: grad_output[" + std::to_string(i) +
                       "] has a shape of " + shape_str(g) + " and output[" + std::to_string(i) +
                       "] has a shape of " + shape_str(out) + ".");
    }
    roots.push_back(gradient_edge(out));
    grads.push_back(g);
  }
}

}  // namespace

void backward(const TensorList& tensors, const TensorList& grad_tensors,
              std::optional<bool> retain_graph, bool create_graph) {
  std::vector<Edge> roots;
  TensorList grads;
  prepare_roots("backward", tensors, grad_tensors, roots, grads);
  execute(roots, std::move(grads), retain_graph.value_or(create_graph), create_graph, {});
}

TensorList grad(const TensorList& outputs, const TensorList& inputs, const TensorList& grad_outputs,
                std::optional<bool> retain_graph, bool create_graph, bool allow_unused) {
  std::vector<Edge> roots;
  TensorList grads;
  prepare_roots("grad", outputs, grad_outputs, roots, grads);
  std::vector<Edge> captures;
  for (const Tensor& t : inputs) {
    if (!t.defined() || !requires_grad(t)) {
      throw Error("[grad] One of the differentiated Tensors does not require grad");
    }
    captures.push_back(gradient_edge(t));
  }
  TensorList result =
      execute(roots, std::move(grads), retain_graph.value_or(create_graph), create_graph, captures);
  for (size_t i = 0; i < result.size(); ++i) {
    if (!result[i].defined() && !allow_unused) {
      throw Error(
          "[grad] One of the differentiated Tensors appears to not have been used in the "
          "graph. Set allow_unused=True if this is the desired behavior.");
    }
    if (result[i].defined())
      result[i] = validate(*captures[i].fn, i, result[i],
                           captures[i].fn->grad_meta()[captures[i].input_nr]);
  }
  return result;
}

}  // namespace ember::autograd

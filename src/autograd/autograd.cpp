// Autograd metadata, saved tensors, the lambda node, leaves' accumulators, views and in-place
// history, and the Tensor members that expose them.
#include <algorithm>

#include "autograd/function.h"
#include "core/record_scope.h"
#include "core/tensor_util.h"

namespace ember {

namespace autograd {

// ---- nodes --------------------------------------------------------------------------------------

namespace {
// Graph teardown without recursion: a dying node hands its children here and the outermost
// destructor releases them one by one (a chain of 10k nodes must not overflow the stack).
thread_local std::vector<std::shared_ptr<Node>> t_pending_delete;
thread_local bool t_deleting = false;

void drain_pending() {
  if (t_deleting) return;
  t_deleting = true;
  while (!t_pending_delete.empty()) {
    std::shared_ptr<Node> n = std::move(t_pending_delete.back());
    t_pending_delete.pop_back();
    n.reset();
  }
  t_deleting = false;
}
}  // namespace

Node::Node() : sequence_nr_(record::next_sequence_nr()) {}

Node::~Node() {
  for (Edge& e : next_edges_) {
    if (e.fn && e.fn.use_count() == 1) t_pending_delete.push_back(std::move(e.fn));
  }
  drain_pending();
}

size_t Node::add_tensor_hook(uint32_t output_nr, TensorHook hook) {
  hooks_.emplace_back(output_nr, std::move(hook));
  return hooks_.size() - 1;
}

void Node::remove_tensor_hook(size_t handle) {
  if (handle < hooks_.size()) hooks_[handle].second = nullptr;
}

void Node::add_retained_grad(uint32_t output_nr, std::weak_ptr<TensorImpl> tensor) {
  retained_.emplace_back(output_nr, std::move(tensor));
}

void Node::move_retained_grads_to(Node& other, uint32_t output_nr, uint32_t new_output_nr) {
  for (auto it = retained_.begin(); it != retained_.end();) {
    if (it->first == output_nr) {
      other.retained_.emplace_back(new_output_nr, std::move(it->second));
      it = retained_.erase(it);
    } else {
      ++it;
    }
  }
}

void Node::run_tensor_hooks(TensorList& grads) {
  for (auto& [nr, hook] : hooks_) {
    if (!hook || nr >= grads.size() || !grads[nr].defined()) continue;
    Tensor r = hook(grads[nr]);
    if (r.defined()) grads[nr] = std::move(r);
  }
  // Retained gradients see the result of every other hook.
  for (auto& [nr, weak] : retained_) {
    std::shared_ptr<TensorImpl> impl = weak.lock();
    if (!impl || nr >= grads.size() || !grads[nr].defined()) continue;
    Tensor t(impl);
    Tensor& g = ensure_meta(t).grad;
    if (!g.defined()) {
      g = is_grad_enabled() ? grads[nr] : grads[nr].clone();
    } else {
      g = g + grads[nr];
    }
  }
}

// ---- metadata -----------------------------------------------------------------------------------

namespace {

// A tensor sharing t's storage and geometry, without autograd metadata or view base.
Tensor shallow_copy(const Tensor& t) {
  auto impl = std::make_shared<TensorImpl>();
  const TensorImpl& s = t.impl();
  impl->storage = s.storage;
  impl->sizes = s.sizes;
  impl->strides = s.strides;
  impl->offset = s.offset;
  impl->dtype = s.dtype;
  impl->device = s.device;
  impl->numel = s.numel;
  impl->contiguous = s.contiguous;
  return Tensor(std::move(impl));
}

// The element span [lo, hi] that a strided geometry touches.
void extent(const Shape& sizes, const Shape& strides, int64_t offset, int64_t& lo, int64_t& hi) {
  int64_t a = offset, b = offset;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == 0) return;
    if (strides[i] >= 0)
      b += (sizes[i] - 1) * strides[i];
    else
      a += (sizes[i] - 1) * strides[i];
  }
  lo = std::min(lo, a);
  hi = std::max(hi, b);
}

void regenerate_view(const Tensor& view);

}  // namespace

AutogradMeta* meta(const Tensor& t) {
  TensorImpl& i = t.impl();
  if (i.view_base && !i.view_no_grad && i.storage && i.view_version != i.storage->version()) {
    regenerate_view(t);
  }
  return i.autograd.get();
}

AutogradMeta& ensure_meta(const Tensor& t) {
  TensorImpl& i = t.impl();
  if (!i.autograd) i.autograd = std::make_shared<AutogradMeta>();
  return *i.autograd;
}

bool needs_grad(std::initializer_list<const Tensor*> inputs) {
  if (!is_grad_enabled()) return false;
  for (const Tensor* t : inputs) {
    if (t && requires_grad(*t)) return true;
  }
  return false;
}

bool needs_grad(const TensorList& inputs) {
  if (!is_grad_enabled()) return false;
  for (const Tensor& t : inputs) {
    if (requires_grad(t)) return true;
  }
  return false;
}

// ---- leaves -------------------------------------------------------------------------------------

namespace {

class AccumulateGrad : public Node {
 public:
  explicit AccumulateGrad(Tensor variable) : variable_(std::move(variable)) {
    grad_meta_.push_back({variable_.sizes(), variable_.dtype(), variable_.device()});
  }
  std::string name() const override { return "AccumulateGrad"; }

  void run_tensor_hooks(TensorList& grads) override {
    AutogradMeta* m = variable_.impl().autograd.get();
    if (!m || grads.empty() || !grads[0].defined()) return;
    for (auto& hook : m->hooks) {
      if (!hook) continue;
      Tensor r = hook(grads[0]);
      if (r.defined()) grads[0] = std::move(r);
    }
  }

  TensorList apply(TensorList&& grads) override {
    Tensor g = std::move(grads[0]);
    if (!g.defined()) return {};
    AutogradMeta& m = ensure_meta(variable_);
    Tensor& cur = m.grad;
    if (!cur.defined()) {
      if (is_grad_enabled()) {
        cur = g;  // create_graph: the gradient keeps its own history
      } else if (g.impl_ptr().use_count() == 1 && g.storage().use_count() == 1 &&
                 g.is_contiguous() && !g.impl().autograd && !g.impl().view_base) {
        cur = std::move(g);  // nobody else sees this buffer: take it
      } else {
        cur = g.clone();
      }
    } else if (!is_grad_enabled() && !requires_grad(cur)) {
      cur.add_(g);
    } else {
      cur = cur + g;
    }
    for (auto& hook : m.post_accumulate_hooks) {
      if (hook) hook(variable_);
    }
    return {};
  }

 private:
  Tensor variable_;
};

std::shared_ptr<Node> grad_accumulator(const Tensor& leaf) {
  AutogradMeta& m = ensure_meta(leaf);
  std::shared_ptr<Node> acc = m.grad_accumulator.lock();
  if (!acc) {
    acc = std::make_shared<AccumulateGrad>(leaf);
    m.grad_accumulator = acc;
  }
  return acc;
}

}  // namespace

Edge gradient_edge(const Tensor& t) {
  if (!t.defined()) return {};
  AutogradMeta* m = meta(t);
  if (!m) return {};
  if (m->grad_fn) return {m->grad_fn, m->output_nr};
  if (m->requires_grad) return {grad_accumulator(t), 0};
  return {};
}

// ---- saved tensors ------------------------------------------------------------------------------

SavedTensor::SavedTensor(const Tensor& t, bool is_output) : is_output_(is_output) {
  if (!t.defined()) return;
  version_ = t.storage() ? t.storage()->version() : 0;
  AutogradMeta* m = meta(t);
  requires_grad_ = m && (m->requires_grad || m->grad_fn);
  if (!m || !m->grad_fn) {
    is_leaf_ = true;
    data_ = t;  // leaves and constants: no history to keep alive, so no cycle
    return;
  }
  // Keep the data without the metadata: a saved output would otherwise own its own node.
  data_ = shallow_copy(t);
  output_nr_ = m->output_nr;
  if (!is_output) grad_fn_ = m->grad_fn;
}

namespace {
std::string describe(const Tensor& t) {
  return "[" + t.device().str() + " " + std::string(dtype_name(t.dtype())) + " " + shape_str(t) +
         "]";
}
}  // namespace

Tensor SavedTensor::unpack(const std::shared_ptr<Node>& owner) const {
  if (!data_.defined()) return {};
  uint32_t now = data_.storage() ? data_.storage()->version() : 0;
  if (now != version_) {
    std::string which;
    const Node* fn = is_output_ ? owner.get() : grad_fn_.get();
    if (fn) which = ", which is output " + std::to_string(output_nr_) + " of " + fn->name();
    throw Error(
        "[backward] one of the variables needed for gradient computation has been "
        "modified by an inplace operation: " +
        describe(data_) + which + ", is at version " + std::to_string(now) + "; expected version " +
        std::to_string(version_) +
        " instead. Hint: an op saved this tensor for backward and it was changed in "
        "place afterwards; clone() it before the in-place op, or use the out-of-place op.");
  }
  if (is_leaf_ || !requires_grad_ || !is_grad_enabled()) return data_;
  Tensor t = shallow_copy(data_);
  AutogradMeta& m = ensure_meta(t);
  m.grad_fn = is_output_ ? owner : grad_fn_;
  m.output_nr = output_nr_;
  return t;
}

// ---- the lambda node ----------------------------------------------------------------------------

FunctionNode::~FunctionNode() {
  for (SavedTensor& s : saved_) s.take_grad_fn(t_pending_delete);
  // ~Node drains the list.
}

TensorList FunctionNode::apply(TensorList&& grads) {
  if (released_) {
    throw Error(
        "[backward] Trying to backward through the graph a second time (or directly "
        "access saved tensors after they have already been freed). Saved intermediate "
        "values of the graph are freed when you call .backward() or autograd::grad(). "
        "Specify retain_graph=true if you need to backward through the graph a second "
        "time or if you need to access saved tensors after calling backward. (node " +
        name() + ")");
  }
  grads.resize(grad_meta_.size());
  for (size_t i = 0; i < grads.size(); ++i) {
    const GradMeta& gm = grad_meta_[i];
    if (!grads[i].defined() && is_floating_point(gm.dtype)) {
      grads[i] = make_empty(gm.shape, gm.dtype, gm.device).zero_();
    }
  }
  TensorList saved;
  saved.reserve(saved_.size());
  std::shared_ptr<Node> self = shared_from_this();
  for (const SavedTensor& s : saved_) saved.push_back(s.unpack(self));
  GradContext ctx{saved, next_edges_};
  TensorList out = fn_(grads, ctx);
  out.resize(next_edges_.size());
  return out;
}

void FunctionNode::release_variables() {
  if (saved_.empty()) return;  // nothing to free: running it again is fine
  std::vector<std::shared_ptr<Node>> keep;
  for (SavedTensor& s : saved_) s.take_grad_fn(keep);
  saved_.clear();
  released_ = true;
}

void record(const char* name, const TensorList& inputs, const TensorList& outputs,
            const TensorList& saved, BackwardFn fn, bool view) {
  auto node = std::make_shared<FunctionNode>(name, std::move(fn));
  auto& edges = node->mutable_next_edges();
  edges.reserve(inputs.size());
  for (const Tensor& t : inputs) edges.push_back(requires_grad(t) ? gradient_edge(t) : Edge{});
  auto& gm = node->mutable_grad_meta();
  gm.reserve(outputs.size());
  uint32_t nr = 0;
  for (const Tensor& o : outputs) {
    gm.push_back(o.defined() ? GradMeta{o.sizes(), o.dtype(), o.device()} : GradMeta{});
    bool is_input = std::any_of(inputs.begin(), inputs.end(),
                                [&](const Tensor& t) { return t.defined() && t.is_same(o); });
    if (o.defined() && is_floating_point(o.dtype()) && !is_input) {
      AutogradMeta& m = ensure_meta(o);
      m.grad_fn = node;
      m.output_nr = nr;
      m.requires_grad = false;
      TensorImpl& oi = o.impl();
      if (view && oi.view_base) {
        oi.view_version = oi.storage ? oi.storage->version() : 0;
      } else {
        oi.view_base.reset();  // a fresh result, even when it is a view of a scratch buffer
      }
    }
    ++nr;
  }
  for (const Tensor& s : saved) {
    bool is_output = std::any_of(outputs.begin(), outputs.end(),
                                 [&](const Tensor& o) { return o.defined() && o.is_same(s); });
    node->saved().emplace_back(s, is_output);
  }
}

void record_constant(const char* name, const Tensor& input, const Tensor& result) {
  record(name, {input}, {result}, {}, [](const TensorList& g, const GradContext&) {
    return TensorList{make_empty(g[0].sizes(), g[0].options()).zero_()};
  });
}

// ---- views and in-place -------------------------------------------------------------------------

Tensor sum_to(const Tensor& g, const Shape& shape) {
  if (g.sizes() == shape) return g;
  const int64_t lead = g.dim() - static_cast<int64_t>(shape.size());
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < lead; ++i) dims.push_back(i);
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1 && g.size(lead + static_cast<int64_t>(i)) != 1) {
      dims.push_back(lead + static_cast<int64_t>(i));
    }
  }
  Tensor r = dims.empty() ? g : g.sum(dims, true);
  return r.reshape(shape);
}

Tensor embed(const Tensor& g, const Shape& shape,
             const std::function<Tensor(const Tensor&)>& region) {
  Tensor z = make_empty(shape, g.options()).zero_();
  Tensor r = region(z);
  r.copy_(g);
  return z;
}

Tensor as_strided_backward(const Tensor& g, const Shape& base_sizes, const Shape& base_strides,
                           int64_t base_offset, const Shape& sizes, const Shape& strides,
                           int64_t offset) {
  // Dims a view repeats (stride 0) receive the sum of their gradients, written once.
  Shape vs = sizes;
  std::vector<int64_t> rep;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (strides[d] == 0 && sizes[d] > 1) {
      rep.push_back(static_cast<int64_t>(d));
      vs[d] = 1;
    }
  }
  Tensor gv = rep.empty() ? g : g.sum(rep, true);
  int64_t lo = std::min(base_offset, offset), hi = lo;
  extent(base_sizes, base_strides, base_offset, lo, hi);
  extent(vs, strides, offset, lo, hi);
  Tensor buf = make_empty({hi - lo + 1}, g.options()).zero_();
  buf.as_strided(vs, strides, offset - lo).copy_(gv);
  return buf.as_strided(base_sizes, base_strides, base_offset - lo);
}

namespace {

void regenerate_view(const Tensor& view) {
  TensorImpl& i = view.impl();
  i.view_version = i.storage->version();
  if (i.autograd && i.autograd->requires_grad) return;  // a leaf of its own
  Tensor base(i.view_base);
  if (!requires_grad(base)) return;
  Shape bs = base.sizes(), bst = base.strides(), vs = i.sizes, vst = i.strides;
  int64_t bo = base.storage_offset(), vo = i.offset;
  auto node = std::make_shared<FunctionNode>(
      "AsStridedBackward0", [=](const TensorList& g, const GradContext&) {
        return TensorList{as_strided_backward(g[0], bs, bst, bo, vs, vst, vo)};
      });
  node->mutable_next_edges().push_back(gradient_edge(base));
  node->mutable_grad_meta().push_back({i.sizes, i.dtype, i.device});
  AutogradMeta& m = ensure_meta(view);
  m.grad_fn = std::move(node);
  m.output_nr = 0;
}

bool is_leaf_requiring_grad(const Tensor& t) {
  AutogradMeta* m = meta(t);
  return m && m->requires_grad && !m->grad_fn;
}

}  // namespace

void check_inplace(const char* op, const Tensor& self) {
  if (is_leaf_requiring_grad(self)) {
    throw Error(op_prefix(op) +
                "a leaf Variable that requires grad is being used in an in-place operation.");
  }
  const TensorImpl& i = self.impl();
  if (i.view_base && !i.view_no_grad && is_leaf_requiring_grad(Tensor(i.view_base))) {
    throw Error(op_prefix(op) +
                "a view of a leaf Variable that requires grad is being used in an "
                "in-place operation.");
  }
}

void rebase_history(const Tensor& self, const Tensor& r) {
  Edge re = gradient_edge(r);
  if (!meta(r)->grad_fn) {
    // r is a leaf (copy_ from a leaf): an identity node stands between.
    auto id = std::make_shared<FunctionNode>(
        "CopyBackwards", [](const TensorList& g, const GradContext&) { return TensorList{g[0]}; });
    id->mutable_next_edges().push_back(re);
    id->mutable_grad_meta().push_back({r.sizes(), r.dtype(), r.device()});
    re = {id, 0};
  }
  TensorImpl& si = self.impl();
  if (si.view_base && !si.view_no_grad) {
    // CopySlices: base_new = base_old with the view's region replaced by r.
    Tensor base(si.view_base);
    Shape bs = base.sizes(), bst = base.strides(), vs = si.sizes, vst = si.strides;
    int64_t bo = base.storage_offset(), vo = si.offset;
    auto node = std::make_shared<FunctionNode>(
        "CopySlices", [=](const TensorList& g, const GradContext& ctx) {
          int64_t lo = std::min(bo, vo), hi = lo;
          extent(bs, bst, bo, lo, hi);
          extent(vs, vst, vo, lo, hi);
          Tensor buf = make_empty({hi - lo + 1}, g[0].options()).zero_();
          Tensor whole = buf.as_strided(bs, bst, bo - lo);
          whole.copy_(g[0]);
          Tensor region = buf.as_strided(vs, vst, vo - lo);
          Tensor g_src = ctx.needs(1) ? region.clone() : Tensor();
          if (ctx.needs(0)) region.zero_();
          return TensorList{ctx.needs(0) ? whole : Tensor(), g_src};
        });
    node->mutable_next_edges().push_back(requires_grad(base) ? gradient_edge(base) : Edge{});
    node->mutable_next_edges().push_back(re);
    node->mutable_grad_meta().push_back({base.sizes(), base.dtype(), base.device()});
    AutogradMeta& bm = ensure_meta(base);
    bm.grad_fn = std::move(node);
    bm.output_nr = 0;
    regenerate_view(self);
    return;
  }
  AutogradMeta& m = ensure_meta(self);
  if (m.retains_grad && m.grad_fn)
    m.grad_fn->move_retained_grads_to(*re.fn, m.output_nr, re.input_nr);
  m.grad_fn = re.fn;
  m.output_nr = re.input_nr;
}

}  // namespace autograd

// ---- Tensor members -----------------------------------------------------------------------------

using autograd::AutogradMeta;

bool Tensor::requires_grad() const { return autograd::requires_grad(*this); }

Tensor& Tensor::requires_grad_(bool r) {
  AutogradMeta* m = autograd::meta(*this);
  if (m && m->grad_fn) {
    if (!r) {
      throw Error(
          "[requires_grad_] you can only change requires_grad flags of leaf variables. If "
          "you want to use a computed variable in a subgraph that doesn't require "
          "differentiation use var_no_grad = var.detach().");
    }
    return *this;
  }
  if (r && !is_floating_point()) {
    throw TypeError(
        "[requires_grad_] only Tensors of floating point dtype can require gradients "
        "(got " +
        std::string(dtype_name(dtype())) + ")");
  }
  if (r || m) autograd::ensure_meta(*this).requires_grad = r;
  return *this;
}

bool Tensor::is_leaf() const {
  AutogradMeta* m = autograd::meta(*this);
  return !m || !m->grad_fn;
}

Tensor Tensor::grad() const {
  AutogradMeta* m = autograd::meta(*this);
  return m ? m->grad : Tensor();
}

Tensor& Tensor::mutable_grad() const { return autograd::ensure_meta(*this).grad; }

std::shared_ptr<autograd::Node> Tensor::grad_fn() const {
  AutogradMeta* m = autograd::meta(*this);
  return m ? m->grad_fn : nullptr;
}

uint32_t Tensor::output_nr() const {
  AutogradMeta* m = autograd::meta(*this);
  return m ? m->output_nr : 0;
}

uint32_t Tensor::_version() const { return storage() ? storage()->version() : 0; }

void Tensor::backward(const Tensor& gradient, std::optional<bool> retain_graph,
                      bool create_graph) const {
  autograd::backward({*this}, {gradient}, retain_graph, create_graph);
}

void Tensor::retain_grad() const {
  if (!requires_grad()) {
    throw Error("[retain_grad] can't retain_grad on Tensor that has requires_grad=False");
  }
  AutogradMeta& m = autograd::ensure_meta(*this);
  if (!m.grad_fn || m.retains_grad) return;  // leaves always keep their gradient
  m.retains_grad = true;
  m.grad_fn->add_retained_grad(m.output_nr, impl_ptr());
}

bool Tensor::retains_grad() const {
  AutogradMeta* m = autograd::meta(*this);
  return m && m->retains_grad;
}

Tensor Tensor::detach() const {
  return autograd::no_grad([&] {
    Tensor t = make_view(*this, sizes(), strides(), storage_offset());
    t.impl().view_base.reset();
    return t;
  });
}

Tensor& Tensor::detach_() {
  if (is_view() && requires_grad()) {
    throw Error("[detach_] Can't detach views in-place. Use detach() instead.");
  }
  if (AutogradMeta* m = autograd::meta(*this)) {
    m->grad_fn.reset();
    m->output_nr = 0;
    m->requires_grad = false;
  }
  return *this;
}

void Tensor::set_data(const Tensor& data) const {
  if (!data.defined()) throw Error("[set_data] the new data is an undefined tensor");
  if (requires_grad() && !data.is_floating_point()) {
    throw TypeError("[set_data] a tensor that requires grad must stay floating point, got " +
                    std::string(dtype_name(data.dtype())));
  }
  TensorImpl& i = impl();
  const TensorImpl& d = data.impl();
  i.storage = d.storage;
  i.sizes = d.sizes;
  i.strides = d.strides;
  i.offset = d.offset;
  i.dtype = d.dtype;
  i.device = d.device;
  i.numel = d.numel;
  i.contiguous = d.contiguous;
  i.view_base.reset();
  // A leaf's accumulator remembers the old shape/dtype/device: the next backward makes a new one.
  if (AutogradMeta* m = autograd::meta(*this)) m->grad_accumulator.reset();
}

size_t Tensor::register_hook(std::function<Tensor(const Tensor&)> hook) const {
  if (!requires_grad()) {
    throw Error("[register_hook] cannot register a hook on a tensor that doesn't require gradient");
  }
  AutogradMeta& m = autograd::ensure_meta(*this);
  if (m.grad_fn) return m.grad_fn->add_tensor_hook(m.output_nr, std::move(hook));
  m.hooks.push_back(std::move(hook));
  return m.hooks.size() - 1;
}

void Tensor::remove_hook(size_t handle) const {
  AutogradMeta* m = autograd::meta(*this);
  if (!m) return;
  if (m->grad_fn) {
    m->grad_fn->remove_tensor_hook(handle);
  } else if (handle < m->hooks.size()) {
    m->hooks[handle] = nullptr;
  }
}

size_t Tensor::register_post_accumulate_grad_hook(std::function<void(Tensor&)> hook) const {
  if (!requires_grad()) {
    throw Error(
        "[register_post_accumulate_grad_hook] cannot register a hook on a tensor that "
        "doesn't require gradient");
  }
  if (!is_leaf()) {
    throw Error(
        "[register_post_accumulate_grad_hook] post accumulate grad hooks cannot be "
        "registered on non-leaf tensors");
  }
  AutogradMeta& m = autograd::ensure_meta(*this);
  m.post_accumulate_hooks.push_back(std::move(hook));
  return m.post_accumulate_hooks.size() - 1;
}

bool Tensor::is_view() const { return impl().view_base != nullptr; }

Tensor Tensor::_base() const { return Tensor(impl().view_base); }

}  // namespace ember

// What the op layer uses to record the graph: per-tensor metadata, saved tensors, a node that
// runs a backward lambda, and the in-place rules (leaf checks, version bumps, history rebasing).
#pragma once

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "ember/autograd.h"

namespace ember::autograd {

struct AutogradMeta {
  bool requires_grad = false;  // set on leaves by requires_grad_()
  Tensor grad;
  std::shared_ptr<Node> grad_fn;  // null for leaves
  uint32_t output_nr = 0;
  std::weak_ptr<Node> grad_accumulator;
  bool retains_grad = false;
  std::vector<TensorHook> hooks;  // leaves; non-leaf hooks live on grad_fn
  std::vector<std::function<void(Tensor&)>> post_accumulate_hooks;
};

// ---- queries every op pays for ------------------------------------------------------------------

// The metadata of t, first regenerating a stale view's grad_fn from its base; may be null.
AutogradMeta* meta(const Tensor& t);
AutogradMeta& ensure_meta(const Tensor& t);

inline bool requires_grad(const Tensor& t) {
  if (!t.defined()) return false;
  const TensorImpl& i = *t.impl_ptr();
  if (!i.autograd && !i.view_base) return false;  // the common case: one load
  const AutogradMeta* m = meta(t);
  return m && (m->requires_grad || m->grad_fn);
}

// Grad mode is on and some input requires grad: the op must record a node.
bool needs_grad(std::initializer_list<const Tensor*> inputs);
bool needs_grad(const TensorList& inputs);

// Where the gradient of t goes: its grad_fn, or its leaf's accumulator; invalid when none.
Edge gradient_edge(const Tensor& t);

// ---- saved tensors ------------------------------------------------------------------------------

// A tensor kept for backward. It remembers the storage version it was saved at and refuses to
// unpack after an in-place change, or after the graph was freed.
class SavedTensor {
 public:
  SavedTensor() = default;
  SavedTensor(const Tensor& t, bool is_output);
  // owner: the node that saved it (the grad_fn of a saved output).
  Tensor unpack(const std::shared_ptr<Node>& owner) const;
  // Moves out the references that keep other nodes alive (for non-recursive graph teardown).
  void take_grad_fn(std::vector<std::shared_ptr<Node>>& out) {
    if (grad_fn_) out.push_back(std::move(grad_fn_));
  }

 private:
  Tensor data_;  // without autograd metadata, unless it is a leaf
  std::shared_ptr<Node> grad_fn_;
  uint32_t output_nr_ = 0;
  uint32_t version_ = 0;
  bool is_output_ = false;
  bool requires_grad_ = false;
  bool is_leaf_ = false;
};

// ---- a node that runs a lambda ------------------------------------------------------------------

struct GradContext {
  const TensorList& saved;
  const std::vector<Edge>& edges;
  // Whether input i takes part in autograd (skip computing its gradient otherwise).
  bool needs(size_t i) const { return i < edges.size() && edges[i].valid(); }
};

// grads: one per forward output (zeros stand in for outputs that got none); returns one
// gradient per input (undefined = none).
using BackwardFn = std::function<TensorList(const TensorList& grads, const GradContext& ctx)>;

class FunctionNode : public Node {
 public:
  FunctionNode(const char* name, BackwardFn fn) : name_(name), fn_(std::move(fn)) {}
  ~FunctionNode() override;
  std::string name() const override { return name_; }
  TensorList apply(TensorList&& grads) override;
  void release_variables() override;
  std::vector<SavedTensor>& saved() { return saved_; }

 private:
  const char* name_;
  BackwardFn fn_;
  std::vector<SavedTensor> saved_;
  bool released_ = false;
};

// Makes `outputs` (the floating ones) the results of a new node over `inputs` that saves `saved`.
// view: the outputs are views of inputs[0] (they keep their view base).
void record(const char* name, const TensorList& inputs, const TensorList& outputs,
            const TensorList& saved, BackwardFn fn, bool view = false);

// Runs f with grad mode off (the forward of an op that records its own node).
template <class F>
auto no_grad(F&& f) {
  NoGradGuard g;
  return f();
}

// ---- in place -----------------------------------------------------------------------------------

// Raises PyTorch's errors for an in-place op on a leaf (or a view of a leaf) that requires grad.
void check_inplace(const char* op, const Tensor& self);
// self was overwritten in place by the value of r (r carries the history): self's history
// becomes r's; for a view, the base's history becomes "base with this region replaced".
void rebase_history(const Tensor& self, const Tensor& r);

// The one entry every in-place op goes through. raw(): the write itself (bumps the version).
// oop(s): the same op out of place, recorded; `s` is self, or a clone of it when saves_self (the
// formula reads the old value, which the write would destroy).
template <class Raw, class Oop>
Tensor& inplace(const char* op, Tensor& self, std::initializer_list<const Tensor*> others,
                Raw&& raw, Oop&& oop, bool saves_self = false) {
  if (!is_grad_enabled()) {
    raw();
    return self;
  }
  check_inplace(op, self);
  bool any = requires_grad(self);
  for (const Tensor* t : others) any = any || (t && requires_grad(*t));
  if (!any) {
    raw();
    return self;
  }
  Tensor r = oop(saves_self ? self.clone() : self);
  if (r.dtype() != self.dtype()) r = r.to(self.dtype());
  {
    NoGradGuard g;
    self.copy_(r);
  }
  rebase_history(self, r);
  return self;
}

// A result whose gradient with respect to `input` is zero (fill_, random in-place ops).
void record_constant(const char* name, const Tensor& input, const Tensor& result);

// ---- gradient helpers shared by formulas --------------------------------------------------------

// Sums g over the dims that broadcasting added or expanded, down to shape.
Tensor sum_to(const Tensor& g, const Shape& shape);
// zeros(shape) with region(z) = g: the backward of views that select a region.
Tensor embed(const Tensor& g, const Shape& shape,
             const std::function<Tensor(const Tensor&)>& region);
// The backward of a strided view (sizes, strides, offset) of a tensor with geometry base_*
// over the same storage (offsets and strides in storage elements).
Tensor as_strided_backward(const Tensor& g, const Shape& base_sizes, const Shape& base_strides,
                           int64_t base_offset, const Shape& sizes, const Shape& strides,
                           int64_t offset);

}  // namespace ember::autograd

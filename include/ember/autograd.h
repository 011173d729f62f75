// Autograd: the graph's nodes, and gradients of outputs with respect to inputs (grad mode and its
// guards are in ember/grad_mode.h, included here).
// The graph is recorded as ops run (define-by-run, like PyTorch) and executed backwards by a
// single-threaded engine on the calling thread; see docs/autograd.md.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ember/grad_mode.h"
#include "ember/tensor.h"

namespace ember {

namespace autograd {

class Node;

// One input of a node: the node that receives the gradient and which of its inputs it is.
struct Edge {
  std::shared_ptr<Node> fn;
  uint32_t input_nr = 0;
  bool valid() const { return fn != nullptr; }
};

// A tensor hook sees the gradient of its tensor and may return a replacement (or an undefined
// tensor to keep it).
using TensorHook = std::function<Tensor(const Tensor&)>;

// What one incoming gradient must look like (the forward output it belongs to).
struct GradMeta {
  Shape shape;
  DType dtype = kFloat32;
  Device device;
};

// A backward function: receives one gradient per forward output, returns one per next edge.
class Node : public std::enable_shared_from_this<Node> {
 public:
  Node();
  virtual ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // PyTorch-style name: "MulBackward0", "AccumulateGrad".
  virtual std::string name() const = 0;
  virtual TensorList apply(TensorList&& grads) = 0;
  // Frees saved tensors after a backward pass that does not retain the graph.
  virtual void release_variables() {}
  // Runs the tensor hooks registered for each forward output on its gradient.
  virtual void run_tensor_hooks(TensorList& grads);

  const std::vector<Edge>& next_edges() const { return next_edges_; }
  const std::vector<GradMeta>& grad_meta() const { return grad_meta_; }
  uint64_t sequence_nr() const { return sequence_nr_; }

  // Internal wiring used by the op layer and the engine.
  std::vector<Edge>& mutable_next_edges() { return next_edges_; }
  std::vector<GradMeta>& mutable_grad_meta() { return grad_meta_; }
  size_t add_tensor_hook(uint32_t output_nr, TensorHook hook);
  void remove_tensor_hook(size_t handle);
  // The gradient of output output_nr is stored in that tensor's .grad() (retain_grad()).
  void add_retained_grad(uint32_t output_nr, std::weak_ptr<TensorImpl> tensor);
  void move_retained_grads_to(Node& other, uint32_t output_nr, uint32_t new_output_nr);

 protected:
  std::vector<Edge> next_edges_;
  std::vector<GradMeta> grad_meta_;
  uint64_t sequence_nr_;
  std::vector<std::pair<uint32_t, TensorHook>> hooks_;
  std::vector<std::pair<uint32_t, std::weak_ptr<TensorImpl>>> retained_;
};

// Gradients of outputs with respect to inputs (not accumulated into .grad()). grad_outputs
// default to ones for one-element outputs; retain_graph defaults to create_graph. An input that
// the outputs do not depend on raises unless allow_unused (then its gradient is undefined).
TensorList grad(const TensorList& outputs, const TensorList& inputs,
                const TensorList& grad_outputs = {},
                std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
                bool allow_unused = false);

// Accumulates gradients of tensors into the leaves' .grad() (Tensor::backward for several roots).
void backward(const TensorList& tensors, const TensorList& grad_tensors = {},
              std::optional<bool> retain_graph = std::nullopt, bool create_graph = false);

}  // namespace autograd
}  // namespace ember

// Grad mode: whether ops record the autograd graph on this thread, and the guards that set it.
#pragma once

namespace ember {

// Whether ops record the graph on this thread (on by default).
bool is_grad_enabled();
void set_grad_enabled(bool enabled);

// RAII: no graph recording in this scope (inference, optimizer updates).
struct NoGradGuard {
  NoGradGuard() : prev_(is_grad_enabled()) { set_grad_enabled(false); }
  ~NoGradGuard() { set_grad_enabled(prev_); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool prev_;
};

// RAII: graph recording on in this scope, even inside a NoGradGuard.
struct EnableGradGuard {
  EnableGradGuard() : prev_(is_grad_enabled()) { set_grad_enabled(true); }
  ~EnableGradGuard() { set_grad_enabled(prev_); }
  EnableGradGuard(const EnableGradGuard&) = delete;
  EnableGradGuard& operator=(const EnableGradGuard&) = delete;

 private:
  bool prev_;
};

// RAII: graph recording on or off in this scope (libtorch's AutoGradMode).
struct AutoGradMode {
  explicit AutoGradMode(bool enabled) : prev_(is_grad_enabled()) { set_grad_enabled(enabled); }
  ~AutoGradMode() { set_grad_enabled(prev_); }
  AutoGradMode(const AutoGradMode&) = delete;
  AutoGradMode& operator=(const AutoGradMode&) = delete;

 private:
  bool prev_;
};

// Whether an InferenceMode guard is active on this thread.
bool is_inference_mode_enabled();
void set_inference_mode_enabled(bool enabled);

// RAII: inference (libtorch's c10::InferenceMode): no graph recording in this scope, and
// InferenceMode::is_enabled() says so. Unlike libtorch, tensors made inside are ordinary tensors:
// they may be used later in autograd (they simply have no history).
class InferenceMode {
 public:
  explicit InferenceMode(bool enabled = true)
      : prev_grad_(is_grad_enabled()), prev_inference_(is_inference_mode_enabled()) {
    set_inference_mode_enabled(enabled);
    set_grad_enabled(!enabled);  // libtorch: InferenceMode(false) turns grad mode on
  }
  ~InferenceMode() {
    set_grad_enabled(prev_grad_);
    set_inference_mode_enabled(prev_inference_);
  }
  InferenceMode(const InferenceMode&) = delete;
  InferenceMode& operator=(const InferenceMode&) = delete;
  static bool is_enabled() { return is_inference_mode_enabled(); }

 private:
  bool prev_grad_;
  bool prev_inference_;
};

}  // namespace ember

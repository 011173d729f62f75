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

}  // namespace ember

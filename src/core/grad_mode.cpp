// Grad mode: one flag per thread (ember/grad_mode.h).
#include "ember/grad_mode.h"

namespace ember {

namespace {
thread_local bool t_grad_enabled = true;
thread_local bool t_inference_mode = false;
}  // namespace

bool is_grad_enabled() { return t_grad_enabled; }
void set_grad_enabled(bool enabled) { t_grad_enabled = enabled; }
bool is_inference_mode_enabled() { return t_inference_mode; }
void set_inference_mode_enabled(bool enabled) { t_inference_mode = enabled; }

}  // namespace ember

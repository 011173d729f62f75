// Grad mode: one flag per thread (ember/grad_mode.h).
#include "ember/grad_mode.h"

namespace ember {

namespace {
thread_local bool t_grad_enabled = true;
}  // namespace

bool is_grad_enabled() { return t_grad_enabled; }
void set_grad_enabled(bool enabled) { t_grad_enabled = enabled; }

}  // namespace ember

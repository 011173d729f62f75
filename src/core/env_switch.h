// Switches read from the environment once, for the defaults of the backends:: flags.
#pragma once

#include <cstdlib>
#include <cstring>

namespace ember {

// False when the variable is set to "0", "off" or "false"; true otherwise (unset included).
inline bool env_switch_on(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return true;
  return !(std::strcmp(v, "0") == 0 || std::strcmp(v, "off") == 0 || std::strcmp(v, "false") == 0);
}

}  // namespace ember

// EMBER_CUDA_ALLOC_CONF: PyTorch's PYTORCH_CUDA_ALLOC_CONF syntax and checks for the options of
// the caching allocator.
#include <cerrno>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "alloc/caching_allocator.h"
#include "ember/error.h"

namespace ember::alloc {

namespace {

[[noreturn]] void bad(const std::string& msg) {
  throw ValueError("[EMBER_CUDA_ALLOC_CONF] " + msg);
}

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\n");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\n");
  return s.substr(first, last - first + 1);
}

double number(const std::string& key, const std::string& value) {
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(value.c_str(), &end);
  if (value.empty() || end != value.c_str() + value.size() || errno != 0) {
    bad("option " + key + " expects a number, got '" + value + "'");
  }
  return v;
}

}  // namespace

AllocatorOptions parse_alloc_conf(const std::string& conf) {
  AllocatorOptions out;
  std::string_view rest = conf;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string_view item = trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    if (item.empty()) continue;
    const auto colon = item.find(':');
    if (colon == std::string_view::npos) {
      bad("expected key:value, got '" + std::string(item) + "'");
    }
    const std::string key(trim(item.substr(0, colon)));
    const std::string value(trim(item.substr(colon + 1)));
    if (key == "max_split_size_mb") {
      const double mb = number(key, value);
      const double min_mb = static_cast<double>(kLargeBuffer >> 20);
      if (!(mb > min_mb) || mb != static_cast<double>(static_cast<long long>(mb))) {
        bad("max_split_size_mb must be a whole number of MiB above " +
            std::to_string(kLargeBuffer >> 20) + ", got '" + value + "'");
      }
      const double max_mb = static_cast<double>(SIZE_MAX >> 20);
      out.max_split_size = mb >= max_mb ? SIZE_MAX : static_cast<std::size_t>(mb) << 20;
    } else if (key == "garbage_collection_threshold") {
      const double t = number(key, value);
      if (!(t > 0.0 && t < 1.0)) {
        bad("garbage_collection_threshold must be between 0 and 1 (exclusive), got '" + value +
            "'");
      }
      out.garbage_collection_threshold = t;
    } else if (key == "expandable_segments") {
      if (value == "True" || value == "true") {
        out.expandable_segments = true;
      } else if (value == "False" || value == "false") {
        out.expandable_segments = false;
      } else {
        bad("expandable_segments expects True or False, got '" + value + "'");
      }
    } else {
      bad("unknown option '" + key +
          "' (known: max_split_size_mb, garbage_collection_threshold, expandable_segments)");
    }
  }
  return out;
}

const AllocatorOptions& alloc_conf_from_env() {
  struct Parsed {
    AllocatorOptions options;
    std::optional<std::string> error;
  };
  static const Parsed parsed = [] {
    Parsed p;
    const char* env = std::getenv("EMBER_CUDA_ALLOC_CONF");
    if (env == nullptr) return p;
    try {
      p.options = parse_alloc_conf(env);
    } catch (const ValueError& e) {
      p.error = e.what();
    }
    return p;
  }();
  if (parsed.error) throw ValueError(*parsed.error);
  return parsed.options;
}

}  // namespace ember::alloc

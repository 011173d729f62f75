// Text of the device allocator: PyTorch-compatible size strings, the OutOfMemoryError message
// and the memory_summary table.
#include <cstdio>
#include <string>

#include "alloc/caching_allocator.h"

namespace ember::alloc {

std::string format_size(std::uint64_t bytes) {
  char buf[64];
  const auto b = static_cast<double>(bytes);
  if (bytes <= 1024) {
    std::snprintf(buf, sizeof(buf), "%llu bytes", static_cast<unsigned long long>(bytes));
  } else if (bytes <= (1ull << 20)) {
    std::snprintf(buf, sizeof(buf), "%.2f KiB", b / 1024.0);
  } else if (bytes <= (1ull << 30)) {
    std::snprintf(buf, sizeof(buf), "%.2f MiB", b / 1048576.0);
  } else {
    std::snprintf(buf, sizeof(buf), "%.2f GiB", b / 1073741824.0);
  }
  return buf;
}

std::string format_oom_message(const OomReport& r) {
  // PyTorch's wording and spacing (double spaces included), so that logs grep alike.
  std::string s = "CUDA out of memory. Tried to allocate " + format_size(r.alloc_size) + ". GPU " +
                  std::to_string(r.device) + " has a total capacity of " +
                  format_size(r.device_total) + " of which " + format_size(r.device_free) +
                  " is free. ";
  if (r.allowed > 0) s += format_size(r.allowed) + " allowed; ";
  s += "Of the allocated memory " + format_size(r.allocated + r.private_cached) +
       " is allocated by ember, ";
  if (r.private_cached > 0) {
    s += "with " + format_size(r.private_cached) +
         " allocated in private pools (e.g., CUDA Graphs), ";
  }
  const std::size_t unallocated = r.reserved - r.allocated - r.private_cached;
  s += "and " + format_size(unallocated) +
       " is reserved by ember but unallocated. If reserved but unallocated memory is large try "
       "setting EMBER_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See "
       "documentation for Memory Management  (docs/allocator.md)";
  // How much of the unallocated cache one request could actually use.
  const double fragmentation = unallocated == 0 ? 0.0
                                                : 1.0 - static_cast<double>(r.largest_free_block) /
                                                            static_cast<double>(unallocated);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.2f", fragmentation);
  s += ". Largest free cached block: " + format_size(r.largest_free_block) +
       "; fragmentation: " + buf + " (1 - largest free block / reserved but unallocated).";
  return s;
}

namespace {

// "%6d {unit}": the unit steps up while the row's "all" value is at least 768 of the next one.
std::string size_cell(std::int64_t value, std::int64_t pref) {
  static const char* const kUnits[] = {"B  ", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int unit = 0;
  double pref_d = static_cast<double>(pref);
  while (unit < 5 && pref_d >= 768.0 * 1024.0) {
    value /= 1024;
    pref_d /= 1024.0;
    ++unit;
  }
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%6lld %s", static_cast<long long>(value), kUnits[unit]);
  return buf;
}

// "%7d {prefix} " with " ", "K", "M" stepping at 750,000 of the row's "all" value.
std::string count_cell(std::int64_t value, std::int64_t pref) {
  static const char kPrefixes[] = {' ', 'K', 'M'};
  int prefix = 0;
  double pref_d = static_cast<double>(pref);
  while (prefix < 2 && pref_d >= 750.0 * 1000.0) {
    value /= 1000;
    pref_d /= 1000.0;
    ++prefix;
  }
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%7lld %c ", static_cast<long long>(value), kPrefixes[prefix]);
  return buf;
}

std::int64_t stat(const std::map<std::string, std::int64_t>& stats, const std::string& key) {
  auto it = stats.find(key);
  return it == stats.end() ? 0 : it->second;
}

std::string pad_right(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

}  // namespace

std::string format_memory_summary(const std::map<std::string, std::int64_t>& stats, int device,
                                  bool abbreviated) {
  using Cell = std::string (*)(std::int64_t, std::int64_t);
  struct Metric {
    const char* key;
    const char* name;
    Cell cell;
  };
  static const Metric kPooled[] = {
      {"allocated_bytes", "Allocated memory", size_cell},
      {"active_bytes", "Active memory", size_cell},
      {"requested_bytes", "Requested memory", size_cell},
      {"reserved_bytes", "GPU reserved memory", size_cell},
      {"inactive_split_bytes", "Non-releasable memory", size_cell},
      {"allocation", "Allocations", count_cell},
      {"active", "Active allocs", count_cell},
      {"segment", "GPU reserved segments", count_cell},
      {"inactive_split", "Non-releasable allocs", count_cell},
  };
  static const Metric kOversize[] = {
      {"oversize_allocations", "Oversize allocations", count_cell},
      {"oversize_segments", "Oversize GPU segments", count_cell},
  };
  static const char* const kColumns[] = {"current", "peak", "allocated", "freed"};

  const std::string rule_eq(75, '=');
  const std::string rule(75, '-');
  std::string out;
  auto line = [&](const std::string& text) { out += "|" + text + "|\n"; };
  // `prefix` names the stats ("{metric}.{pool}."), `pref` the row whose values pick the units.
  auto row = [&](const std::string& name, const std::string& prefix, const std::string& pref,
                 Cell cell) {
    std::string text(1, ' ');
    text += pad_right(name, 21);
    for (const char* col : kColumns) {
      text += " | ";
      text += cell(stat(stats, prefix + col), stat(stats, pref + col));
    }
    text += ' ';
    line(text);
  };

  line(rule_eq);
  line(std::string(18, ' ') + " ember CUDA memory summary, device ID " +
       pad_right(std::to_string(device), 18) + " ");
  line(rule);
  line("  " + std::string(9, ' ') + " CUDA OOMs: " +
       pad_right(std::to_string(stat(stats, "num_ooms")), 12) + " | " + std::string(6, ' ') +
       " cudaMalloc retries: " + pad_right(std::to_string(stat(stats, "num_alloc_retries")), 8) +
       "  ");
  line(rule_eq);
  line("        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  ");
  for (const Metric& m : kPooled) {
    line(rule);
    const std::string all = std::string(m.key) + ".all.";
    row(m.name, all, all, m.cell);
    if (!abbreviated) {
      row("      from large pool", std::string(m.key) + ".large_pool.", all, m.cell);
      row("      from small pool", std::string(m.key) + ".small_pool.", all, m.cell);
    }
  }
  for (const Metric& m : kOversize) {
    line(rule);
    const std::string key = std::string(m.key) + ".";
    row(m.name, key, key, m.cell);
  }
  line(rule_eq);
  return out;
}

}  // namespace ember::alloc

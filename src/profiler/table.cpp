// key_averages: events grouped by name (and input shapes), and PyTorch's table of them.
#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "ember/error.h"
#include "ember/profiler.h"

namespace ember::profiler {

namespace {

std::string shapes_str(const std::vector<std::vector<int64_t>>& shapes) {
  std::string s = "[";
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (i) s += ", ";
    s += "[";
    for (size_t j = 0; j < shapes[i].size(); ++j) {
      if (j) s += ", ";
      s += std::to_string(shapes[i][j]);
    }
    s += "]";
  }
  return s + "]";
}

// PyTorch's time format: us below 1 ms, ms below 1 s, else s.
std::string time_str(double us) {
  char buf[32];
  if (us >= 1e6) {
    std::snprintf(buf, sizeof buf, "%.3fs", us / 1e6);
  } else if (us >= 1e3) {
    std::snprintf(buf, sizeof buf, "%.3fms", us / 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.3fus", us);
  }
  return buf;
}

std::string pct_str(double part, double total) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%", total > 0 ? 100.0 * part / total : 0.0);
  return buf;
}

// PyTorch's memory format: "b", "Kb", "Mb", "Gb" with two decimals.
std::string mem_str(int64_t bytes) {
  char buf[32];
  const double b = static_cast<double>(bytes);
  const double a = b < 0 ? -b : b;
  if (a >= 1024.0 * 1024 * 1024) {
    std::snprintf(buf, sizeof buf, "%.2f Gb", b / (1024.0 * 1024 * 1024));
  } else if (a >= 1024.0 * 1024) {
    std::snprintf(buf, sizeof buf, "%.2f Mb", b / (1024.0 * 1024));
  } else if (a >= 1024.0) {
    std::snprintf(buf, sizeof buf, "%.2f Kb", b / 1024.0);
  } else {
    std::snprintf(buf, sizeof buf, "%lld b", static_cast<long long>(bytes));
  }
  return buf;
}

double sort_value(const FunctionEventAvg& r, const std::string& key) {
  if (key == "cpu_time_total") return r.cpu_time_total;
  if (key == "self_cpu_time_total") return r.self_cpu_time_total;
  if (key == "cuda_time_total") return r.cuda_time_total;
  if (key == "self_cuda_time_total") return r.self_cuda_time_total;
  if (key == "count") return static_cast<double>(r.count);
  if (key == "cpu_memory_usage") return static_cast<double>(r.cpu_memory_usage);
  if (key == "self_cpu_memory_usage") return static_cast<double>(r.self_cpu_memory_usage);
  if (key == "cuda_memory_usage") return static_cast<double>(r.cuda_memory_usage);
  if (key == "self_cuda_memory_usage") return static_cast<double>(r.self_cuda_memory_usage);
  throw ValueError("[profiler] unknown sort_by '" + key +
                   "': use cpu_time_total, self_cpu_time_total, cuda_time_total, "
                   "self_cuda_time_total, count, cpu_memory_usage or self_cpu_memory_usage");
}

}  // namespace

KeyAverages profile::key_averages(bool group_by_input_shape) const {
  KeyAverages out;
  out.with_shapes = group_by_input_shape;
  out.with_memory = options_.profile_memory;
  std::map<std::pair<std::string, std::string>, size_t> index;
  for (const Event& e : events_) {
    const std::string shapes = group_by_input_shape ? shapes_str(e.input_shapes) : "";
    auto [it, fresh] = index.try_emplace({e.name, shapes}, out.rows.size());
    if (fresh) {
      out.rows.emplace_back();
      out.rows.back().key = e.name;
      out.rows.back().input_shapes = shapes;
    }
    FunctionEventAvg& r = out.rows[it->second];
    ++r.count;
    r.cpu_time_total += e.cpu_time_us();
    r.self_cpu_time_total += e.self_cpu_time_us;
    r.cpu_memory_usage += e.cpu_memory_usage;
    r.self_cpu_memory_usage += e.self_cpu_memory_usage;
    r.cuda_memory_usage += e.cuda_memory_usage;
    r.self_cuda_memory_usage += e.self_cuda_memory_usage;
  }
  return out;
}

double KeyAverages::self_cpu_time_total() const {
  double t = 0;
  for (const FunctionEventAvg& r : rows) t += r.self_cpu_time_total;
  return t;
}

std::string KeyAverages::table(const std::string& sort_by, int64_t row_limit) const {
  std::vector<const FunctionEventAvg*> order;
  for (const FunctionEventAvg& r : rows) order.push_back(&r);
  if (!sort_by.empty()) {
    for (const FunctionEventAvg* r : order) sort_value(*r, sort_by);  // validates the key
    std::stable_sort(order.begin(), order.end(), [&](auto* a, auto* b) {
      return sort_value(*a, sort_by) > sort_value(*b, sort_by);
    });
  }
  if (row_limit >= 0 && static_cast<int64_t>(order.size()) > row_limit) order.resize(row_limit);

  double self_cpu = 0, self_cuda = 0;
  for (const FunctionEventAvg& r : rows) {
    self_cpu += r.self_cpu_time_total;
    self_cuda += r.self_cuda_time_total;
  }
  std::vector<std::string> head = {"Name",       "Self CPU %",   "Self CPU",  "CPU total %",
                                   "CPU total",  "CPU time avg", "Self CUDA", "Self CUDA %",
                                   "CUDA total", "CUDA time avg"};
  if (with_memory) {
    for (const char* h : {"CPU Mem", "Self CPU Mem", "CUDA Mem", "Self CUDA Mem"})
      head.push_back(h);
  }
  head.push_back("# of Calls");
  if (with_shapes) head.push_back("Input Shapes");

  std::vector<std::vector<std::string>> cells;
  for (const FunctionEventAvg* r : order) {
    const double n = static_cast<double>(std::max<int64_t>(r->count, 1));
    std::vector<std::string> c = {r->key,
                                  pct_str(r->self_cpu_time_total, self_cpu),
                                  time_str(r->self_cpu_time_total),
                                  pct_str(r->cpu_time_total, self_cpu),
                                  time_str(r->cpu_time_total),
                                  time_str(r->cpu_time_total / n),
                                  time_str(r->self_cuda_time_total),
                                  pct_str(r->self_cuda_time_total, self_cuda),
                                  time_str(r->cuda_time_total),
                                  time_str(r->cuda_time_total / n)};
    if (with_memory) {
      c.push_back(mem_str(r->cpu_memory_usage));
      c.push_back(mem_str(r->self_cpu_memory_usage));
      c.push_back(mem_str(r->cuda_memory_usage));
      c.push_back(mem_str(r->self_cuda_memory_usage));
    }
    c.push_back(std::to_string(r->count));
    if (with_shapes) c.push_back(r->input_shapes);
    cells.push_back(std::move(c));
  }
  std::vector<size_t> width(head.size());
  for (size_t i = 0; i < head.size(); ++i) width[i] = head[i].size();
  for (const auto& c : cells) {
    for (size_t i = 0; i < c.size(); ++i) width[i] = std::max(width[i], c[i].size());
  }
  width[0] = std::min<size_t>(width[0], 55);
  std::ostringstream os;
  std::string rule;
  for (size_t i = 0; i < head.size(); ++i) rule += std::string(width[i], '-') + "  ";
  rule.resize(rule.size() - 2);
  auto line = [&](const std::vector<std::string>& c) {
    std::string s;
    for (size_t i = 0; i < c.size(); ++i) {
      std::string v = c[i];
      if (v.size() > width[i]) v = v.substr(0, width[i] - 3) + "...";
      // The name column is left-aligned, the numbers right-aligned, as PyTorch prints them.
      s += i == 0 ? v + std::string(width[i] - v.size(), ' ')
                  : std::string(width[i] - v.size(), ' ') + v;
      if (i + 1 < c.size()) s += "  ";
    }
    os << s << "\n";
  };
  os << rule << "\n";
  line(head);
  os << rule << "\n";
  for (const auto& c : cells) line(c);
  os << rule << "\n";
  os << "Self CPU time total: " << time_str(self_cpu) << "\n";
  if (self_cuda > 0) os << "Self CUDA time total: " << time_str(self_cuda) << "\n";
  return os.str();
}

}  // namespace ember::profiler

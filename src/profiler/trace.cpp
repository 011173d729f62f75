// Chrome trace-event JSON: export of a profile (one "X" event per range, flow arrows from a
// forward op to its backward node, memory counters) and the reader behind `ember profile FILE`.
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "ember/error.h"
#include "ember/profiler.h"
#include "io/json.h"

namespace ember::profiler {

namespace {

void num(std::string& out, double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  out += buf;
}

}  // namespace

void profile::export_chrome_trace(const std::string& path) const {
  std::string out = "{\"schemaVersion\": 1, \"displayTimeUnit\": \"ms\",\n\"traceEvents\": [\n";
  out +=
      "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 0, \"tid\": 0, "
      "\"args\": {\"name\": \"CPU\"}}";
  std::map<uint64_t, const Event*> forward;  // sequence_nr -> the outermost op that took it
  int64_t cpu_mem = 0;
  for (const Event& e : events_) {
    out += ",\n{\"ph\": \"X\", \"cat\": \"";
    out += e.kind == "user" ? "user_annotation" : e.kind == "backward" ? "backward" : "cpu_op";
    out += "\", \"name\": ";
    io::json::append_string(out, e.name);
    out += ", \"pid\": 0, \"tid\": " + std::to_string(e.thread) + ", \"ts\": ";
    num(out, e.start_us);
    out += ", \"dur\": ";
    num(out, e.cpu_time_us());
    out += ", \"args\": {\"Self CPU us\": ";
    num(out, e.self_cpu_time_us);
    out += ", \"Sequence number\": " + std::to_string(e.sequence_nr);
    out += ", \"Depth\": " + std::to_string(e.depth);
    if (!e.input_shapes.empty()) {
      out += ", \"Input Dims\": [";
      for (size_t i = 0; i < e.input_shapes.size(); ++i) {
        out += i ? ", [" : "[";
        for (size_t j = 0; j < e.input_shapes[i].size(); ++j) {
          if (j) out += ", ";
          out += std::to_string(e.input_shapes[i][j]);
        }
        out += "]";
      }
      out += "], \"Input type\": [";
      for (size_t i = 0; i < e.input_dtypes.size(); ++i) {
        if (i) out += ", ";
        io::json::append_string(out, e.input_dtypes[i]);
      }
      out += "]";
    }
    out += "}}";
    if (e.kind == "op" && !forward.count(e.sequence_nr)) forward[e.sequence_nr] = &e;
    if (e.kind == "backward") {
      // A flow arrow from the forward op that made the node to the node's backward range.
      auto it = forward.find(e.sequence_nr);
      if (it != forward.end()) {
        const Event& f = *it->second;
        const std::string id = std::to_string(e.id);
        out += ",\n{\"ph\": \"s\", \"id\": " + id +
               ", \"cat\": \"fwdbwd\", \"name\": \"fwdbwd\", \"pid\": 0, \"tid\": " +
               std::to_string(f.thread) + ", \"ts\": ";
        num(out, f.start_us);
        out += "},\n{\"ph\": \"f\", \"bp\": \"e\", \"id\": " + id +
               ", \"cat\": \"fwdbwd\", \"name\": \"fwdbwd\", \"pid\": 0, \"tid\": " +
               std::to_string(e.thread) + ", \"ts\": ";
        num(out, e.start_us);
        out += "}";
      }
    }
    if (e.self_cpu_memory_usage != 0) {
      cpu_mem += e.self_cpu_memory_usage;
      out += ",\n{\"ph\": \"C\", \"name\": \"CPU memory\", \"pid\": 0, \"ts\": ";
      num(out, e.end_us);
      out += ", \"args\": {\"Allocated bytes\": " + std::to_string(cpu_mem) + "}}";
    }
  }
  out += "\n],\n\"otherData\": {\"producer\": \"ember\", \"dropped_events\": " +
         std::to_string(dropped_) + "}}\n";
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw Error("[profiler] cannot write the trace to '" + path + "'");
  f << out;
  f.flush();
  if (!f) throw Error("[profiler] cannot write the trace to '" + path + "'");
}

KeyAverages load_chrome_trace(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error("[profile] cannot read '" + path + "'");
  std::ostringstream ss;
  ss << f.rdbuf();
  io::json::Value root;
  try {
    root = io::json::parse(ss.str());
  } catch (const std::exception& e) {
    throw ValueError("[profile] '" + path + "' is not a JSON trace: " + e.what());
  }
  const io::json::Value* evs = root.is_object() ? root.find("traceEvents") : nullptr;
  if (evs == nullptr || !evs->is_array()) {
    throw ValueError("[profile] '" + path + "' has no traceEvents array (not a Chrome trace)");
  }
  KeyAverages out;
  std::map<std::string, size_t> index;
  auto number = [&](const io::json::Value* v, const char* what) {
    if (v == nullptr || !v->is_number()) {
      throw ValueError("[profile] '" + path + "': an X event lacks a numeric " + what);
    }
    return std::stod(v->text);
  };
  for (const io::json::Value& e : evs->array) {
    if (!e.is_object())
      throw ValueError("[profile] '" + path + "': a trace event is not an object");
    const io::json::Value* ph = e.find("ph");
    if (ph == nullptr || !ph->is_string() || ph->text != "X") continue;
    const io::json::Value* name = e.find("name");
    if (name == nullptr || !name->is_string()) {
      throw ValueError("[profile] '" + path + "': an X event has no name");
    }
    const double dur = number(e.find("dur"), "dur");
    double self = dur;
    if (const io::json::Value* args = e.find("args"); args != nullptr && args->is_object()) {
      if (const io::json::Value* s = args->find("Self CPU us"); s != nullptr && s->is_number()) {
        self = std::stod(s->text);
      }
    }
    auto [it, fresh] = index.try_emplace(name->text, out.rows.size());
    if (fresh) {
      out.rows.emplace_back();
      out.rows.back().key = name->text;
    }
    FunctionEventAvg& r = out.rows[it->second];
    ++r.count;
    r.cpu_time_total += dur;
    r.self_cpu_time_total += self;
  }
  return out;
}

}  // namespace ember::profiler

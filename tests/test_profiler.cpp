// The profiler on the CPU: the op hook, key_averages rows and the self/total relations for a
// small model step, nesting, forward/backward links, shapes, memory, traces and bad input.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "ember/ember.h"
#include "ember/profiler.h"
#include "io/json.h"

namespace ember {
namespace {

using profiler::Event;
using profiler::profile;

// One training step of a two-layer MLP: linear -> relu -> linear -> sum, then backward.
void model_step(const Tensor& x, const Tensor& w1, const Tensor& w2) {
  profiler::record_function step("model_step");
  Tensor h;
  {
    profiler::record_function fwd("forward");
    h = relu(linear(x, w1, Tensor()));
    h = linear(h, w2, Tensor()).sum();
  }
  h.backward();
}

std::map<std::string, const profiler::FunctionEventAvg*> by_name(const profiler::KeyAverages& k) {
  std::map<std::string, const profiler::FunctionEventAvg*> m;
  for (const auto& r : k.rows) m[r.key] = &r;
  return m;
}

TEST(Profiler, ModelStepRowsCountsAndNesting) {
  Tensor x = randn({4, 3});
  Tensor w1 = randn({5, 3}).requires_grad_();
  Tensor w2 = randn({2, 5}).requires_grad_();
  profile prof({.record_shapes = true});
  prof.start();
  model_step(x, w1, w2);
  prof.stop();

  const auto& ev = prof.events();
  ASSERT_FALSE(ev.empty());
  auto k = prof.key_averages();
  auto rows = by_name(k);
  ASSERT_TRUE(rows.count("model_step"));
  ASSERT_TRUE(rows.count("linear"));
  ASSERT_TRUE(rows.count("relu"));
  ASSERT_TRUE(rows.count("sum"));
  EXPECT_EQ(rows["model_step"]->count, 1);
  // Two linears ran inside the "forward" range (backward may call more).
  int64_t fwd_linear = 0;
  for (const Event& e : ev) {
    if (e.name == "linear" && e.parent >= 0 && ev[e.parent].name == "forward") ++fwd_linear;
  }
  EXPECT_EQ(fwd_linear, 2);
  EXPECT_GE(rows["linear"]->count, 2);
  EXPECT_EQ(rows["relu"]->count, 1);
  // Backward nodes are ranges too, with PyTorch's names.
  bool any_backward = false;
  for (const auto& r : k.rows)
    any_backward = any_backward || r.key.find("Backward") != std::string::npos;
  EXPECT_TRUE(any_backward);

  for (const auto& r : k.rows) {
    EXPECT_LE(r.self_cpu_time_total, r.cpu_time_total + 1e-9) << r.key;
    EXPECT_GE(r.self_cpu_time_total, 0) << r.key;
  }
  // Children lie inside their parents; the outer range is the root of everything recorded.
  for (const Event& e : ev) {
    EXPECT_LE(e.start_us, e.end_us) << e.name;
    if (e.parent < 0) continue;
    const Event& p = ev[e.parent];
    EXPECT_GE(e.start_us, p.start_us) << e.name << " in " << p.name;
    EXPECT_LE(e.end_us, p.end_us) << e.name << " in " << p.name;
    EXPECT_EQ(e.depth, p.depth + 1);
  }
  EXPECT_EQ(ev[0].name, "model_step");
  for (size_t i = 1; i < ev.size(); ++i) EXPECT_GE(ev[i].depth, 1) << ev[i].name;
  // The self times add up to the root's total.
  double self_sum = 0;
  for (const Event& e : ev) self_sum += e.self_cpu_time_us;
  EXPECT_NEAR(self_sum, ev[0].cpu_time_us(), 1e-6 * ev[0].cpu_time_us() + 1e-6);

  // Shapes: the first linear saw (4,3) and (5,3) in float32.
  for (const Event& e : ev) {
    if (e.name != "linear") continue;
    ASSERT_GE(e.input_shapes.size(), 2u);
    EXPECT_EQ(e.input_shapes[0], (std::vector<int64_t>{4, 3}));
    EXPECT_EQ(e.input_shapes[1], (std::vector<int64_t>{5, 3}));
    EXPECT_EQ(e.input_dtypes[0], "float32");
    break;
  }
  // key_averages grouped by shapes splits the two linears.
  auto ks = prof.key_averages(true);
  int linear_rows = 0;
  for (const auto& r : ks.rows) linear_rows += r.key == "linear";
  EXPECT_EQ(linear_rows, 2);
}

TEST(Profiler, ForwardAndBackwardShareSequenceNumbers) {
  Tensor a = randn({3}).requires_grad_();
  profile prof;
  prof.start();
  Tensor y = mul(a, a).sum();
  y.backward();
  prof.stop();
  const Event* mul_ev = nullptr;
  const Event* mul_bwd = nullptr;
  for (const Event& e : prof.events()) {
    if (e.name == "mul" && mul_ev == nullptr) mul_ev = &e;
    if (e.name == "MulBackward0") mul_bwd = &e;
  }
  ASSERT_NE(mul_ev, nullptr);
  ASSERT_NE(mul_bwd, nullptr);
  EXPECT_EQ(mul_bwd->kind, "backward");
  EXPECT_EQ(mul_ev->sequence_nr, mul_bwd->sequence_nr);
}

TEST(Profiler, TableHasPyTorchColumnsAndFooter) {
  profile prof({.profile_memory = true});
  prof.start();
  Tensor t = add(randn({64, 64}), 1.0);
  prof.stop();
  std::string table = prof.key_averages().table("self_cpu_time_total", 5);
  for (const char* col : {"Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total",
                          "CPU time avg", "Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg",
                          "CPU Mem", "Self CPU Mem", "CUDA Mem", "Self CUDA Mem", "# of Calls"}) {
    EXPECT_NE(table.find(col), std::string::npos) << col << "\n" << table;
  }
  EXPECT_NE(table.find("Self CPU time total: "), std::string::npos);
  EXPECT_NE(table.find("add"), std::string::npos);
  // The add allocated its 64x64 float32 output: 16 Kb of self CPU memory.
  auto rows = by_name(prof.key_averages());
  ASSERT_TRUE(rows.count("add"));
  EXPECT_EQ(rows["add"]->self_cpu_memory_usage, 64 * 64 * 4);
  EXPECT_THROW(prof.key_averages().table("bogus"), ValueError);
}

TEST(Profiler, RowLimitAndNothingRecordedWhenOff) {
  { Tensor t = add(randn({2}), 1.0); }  // no profiler: nothing to see, nothing breaks
  profile prof;
  prof.start();
  for (int i = 0; i < 3; ++i) Tensor t = mul(randn({2}), 2.0);
  prof.stop();
  auto rows = by_name(prof.key_averages());
  EXPECT_EQ(rows["mul"]->count, 3);
  std::string table = prof.key_averages().table("count", 1);
  EXPECT_NE(table.find("mul"), std::string::npos);
  EXPECT_EQ(table.find("randn"), std::string::npos);
}

TEST(Profiler, ScheduleRecordsOnlyActiveStepsAndCallsTraceReady) {
  int ready = 0;
  std::vector<int64_t> mul_counts;
  profile prof({.schedule = profiler::schedule(1, 1, 2, 1), .on_trace_ready = [&](profile& p) {
                  ++ready;
                  int64_t n = 0;
                  for (const Event& e : p.events()) n += e.name == "mul";
                  mul_counts.push_back(n);
                }});
  prof.start();
  for (int s = 0; s < 6; ++s) {
    Tensor t = mul(ones({2}), 3.0);
    prof.step();
  }
  prof.stop();
  EXPECT_EQ(ready, 1);
  ASSERT_EQ(mul_counts.size(), 1u);
  EXPECT_EQ(mul_counts[0], 2);  // steps 2 and 3 of wait 1 + warmup 1 + active 2
}

TEST(Profiler, ChromeTraceParsesAndFollowsTheTraceEventFormat) {
  Tensor a = randn({3}).requires_grad_();
  profile prof({.record_shapes = true, .profile_memory = true});
  prof.start();
  {
    profiler::record_function r("region \"quoted\"");
    mul(a, a).sum().backward();
  }
  prof.stop();
  const std::string path = testing::TempDir() + "/ember_trace.json";
  prof.export_chrome_trace(path);
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  io::json::Value root = io::json::parse(ss.str());
  ASSERT_TRUE(root.is_object());
  const io::json::Value* evs = root.find("traceEvents");
  ASSERT_NE(evs, nullptr);
  ASSERT_TRUE(evs->is_array());
  int x = 0, flows_s = 0, flows_f = 0, counters = 0;
  bool region = false;
  for (const auto& e : evs->array) {
    ASSERT_TRUE(e.is_object());
    const auto* ph = e.find("ph");
    ASSERT_NE(ph, nullptr);
    ASSERT_TRUE(ph->is_string());
    ASSERT_NE(e.find("pid"), nullptr);
    const std::string p = ph->text;
    ASSERT_TRUE(p == "X" || p == "M" || p == "s" || p == "f" || p == "C") << p;
    if (p == "X" || p == "s" || p == "f" || p == "C") {
      ASSERT_NE(e.find("ts"), nullptr);
      EXPECT_TRUE(e.find("ts")->is_number());
    }
    if (p == "X") {
      ++x;
      ASSERT_NE(e.find("dur"), nullptr);
      ASSERT_NE(e.find("tid"), nullptr);
      ASSERT_TRUE(e.find("name")->is_string());
      region = region || e.find("name")->text == "region \"quoted\"";
    }
    flows_s += p == "s";
    flows_f += p == "f";
    if (p == "C") {
      ++counters;
      ASSERT_TRUE(e.find("args")->is_object());
    }
    if (p == "s" || p == "f") ASSERT_NE(e.find("id"), nullptr);
  }
  EXPECT_EQ(x, static_cast<int>(prof.events().size()));
  EXPECT_TRUE(region);
  EXPECT_GE(flows_s, 1);  // mul -> MulBackward0 at least
  EXPECT_EQ(flows_s, flows_f);
  EXPECT_GE(counters, 1);

  // Read back: the same rows and counts.
  auto back = profiler::load_chrome_trace(path);
  auto orig = by_name(prof.key_averages());
  auto got = by_name(back);
  EXPECT_EQ(got.size(), orig.size());
  for (const auto& [name, r] : orig) {
    ASSERT_TRUE(got.count(name)) << name;
    EXPECT_EQ(got[name]->count, r->count) << name;
  }
  std::remove(path.c_str());
}

TEST(Profiler, EventCapDropsAndCounts) {
  profile prof({.max_events = 3});
  prof.start();
  for (int i = 0; i < 5; ++i) Tensor t = add(ones({1}), 1.0);
  prof.stop();
  EXPECT_EQ(prof.events().size(), 3u);
  EXPECT_GT(prof.dropped_events(), 0);
}

TEST(Profiler, BadInput) {
  profile a;
  EXPECT_THROW(a.stop(), Error);
  a.start();
  EXPECT_THROW(a.start(), Error);
  profile b;
  try {
    b.start();
    FAIL() << "two profilers recorded at once";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[profiler]"), std::string::npos);
  }
  a.stop();
  try {
    a.export_chrome_trace("/nonexistent-dir/x/trace.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/x/trace.json"), std::string::npos);
  }
  EXPECT_THROW(profiler::schedule(0, 0, 0), ValueError);
  EXPECT_THROW(profile({.max_events = 0}), ValueError);
  const std::string bad = testing::TempDir() + "/ember_bad_trace.json";
  {
    std::ofstream f(bad);
    f << "{\"traceEvents\": [ {\"ph\": \"X\"";
  }
  try {
    profiler::load_chrome_trace(bad);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(bad), std::string::npos);
  }
  EXPECT_THROW(profiler::load_chrome_trace(bad + ".missing"), Error);
  std::remove(bad.c_str());
}

}  // namespace
}  // namespace ember

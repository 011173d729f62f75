// The profiler (torch.profiler in C++): op ranges with shapes and memory, user ranges, the
// key_averages table and Chrome trace-event JSON.
//
//   profiler::profile prof({.record_shapes = true, .profile_memory = true});
//   prof.start(); model_step(); prof.stop();
//   std::cout << prof.key_averages().table("self_cpu_time_total", 10);
//   prof.export_chrome_trace("trace.json");
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ember::profiler {

enum class ProfilerActivity { CPU, CUDA };

// What the schedule asks for at a step (PyTorch's ProfilerAction).
enum class ProfilerAction { NONE, WARMUP, RECORD, RECORD_AND_SAVE };

// Step number -> action. schedule(wait, warmup, active, repeat): cycles of wait + warmup + active
// steps, the last active step of each cycle saves; repeat = 0 cycles forever.
using Schedule = std::function<ProfilerAction(int64_t step)>;
Schedule schedule(int64_t wait, int64_t warmup, int64_t active, int64_t repeat = 0,
                  int64_t skip_first = 0);

class profile;

struct ProfilerOptions {
  std::vector<ProfilerActivity> activities = {ProfilerActivity::CPU};
  bool record_shapes = false;                    // input shapes and dtypes of each op
  bool profile_memory = false;                   // bytes allocated and freed inside each range
  bool with_stack = false;                       // accepted; ranges carry no C++ stacks yet
  Schedule schedule;                             // empty: record from start() to stop()
  std::function<void(profile&)> on_trace_ready;  // called when a recorded cycle ends
  // At most this many events are kept per cycle (later ones are counted as dropped).
  int64_t max_events = 1'000'000;
};

// One recorded range. Times are microseconds since the profiler started.
struct Event {
  std::string name;
  std::string kind;  // "op", "backward", "user"
  uint64_t thread = 0;
  int64_t id = 0;
  int64_t parent = -1;  // index of the enclosing event in events(), -1 at top level
  int depth = 0;
  double start_us = 0;
  double end_us = 0;
  uint64_t sequence_nr = 0;  // forward op <-> its backward node
  std::vector<std::vector<int64_t>> input_shapes;
  std::vector<std::string> input_dtypes;
  int64_t cpu_memory_usage = 0;  // bytes, children included (profile_memory)
  int64_t self_cpu_memory_usage = 0;
  int64_t cuda_memory_usage = 0;
  int64_t self_cuda_memory_usage = 0;
  double cpu_time_us() const { return end_us - start_us; }
  double self_cpu_time_us = 0;  // minus the children's time
};

// One row of key_averages(): every event of one name (and input shapes when grouped by them).
struct FunctionEventAvg {
  std::string key;
  std::string input_shapes;  // "[[2, 3], [3]]" when grouped by input shape
  int64_t count = 0;
  double cpu_time_total = 0;  // us
  double self_cpu_time_total = 0;
  double cuda_time_total = 0;
  double self_cuda_time_total = 0;
  int64_t cpu_memory_usage = 0;
  int64_t self_cpu_memory_usage = 0;
  int64_t cuda_memory_usage = 0;
  int64_t self_cuda_memory_usage = 0;
};

class KeyAverages {
 public:
  std::vector<FunctionEventAvg> rows;
  bool with_shapes = false;
  bool with_memory = false;
  // PyTorch's table; sort_by: "cpu_time_total", "self_cpu_time_total", "cuda_time_total",
  // "self_cuda_time_total", "count", "cpu_memory_usage", "self_cpu_memory_usage" (or "" = none).
  std::string table(const std::string& sort_by = "", int64_t row_limit = 100) const;
  double self_cpu_time_total() const;
};

// Records between start() and stop() (or for its lifetime when started by the caller).
class profile {
 public:
  explicit profile(ProfilerOptions options = {});
  ~profile();
  profile(const profile&) = delete;
  profile& operator=(const profile&) = delete;

  // Starts recording; throws when this or another profiler is already recording.
  void start();
  // Stops; throws when not started.
  void stop();
  // Advances the schedule by one step.
  void step();
  int64_t step_num() const { return step_; }

  // The events of the current (or last finished) cycle, in start order.
  const std::vector<Event>& events() const { return events_; }
  int64_t dropped_events() const { return dropped_; }
  KeyAverages key_averages(bool group_by_input_shape = false) const;
  // Chrome trace-event JSON (chrome://tracing, Perfetto); throws naming path when unwritable.
  void export_chrome_trace(const std::string& path) const;

  struct State;  // the recorder (internal)

 private:
  void begin_recording();
  void end_recording(bool save);
  ProfilerOptions options_;
  bool started_ = false;
  bool recording_ = false;
  int64_t step_ = 0;
  std::vector<Event> events_;
  int64_t dropped_ = 0;
  State* state_ = nullptr;
};

// A user range that nests in the profile (torch.profiler.record_function).
class record_function {
 public:
  explicit record_function(const std::string& name);
  ~record_function();
  record_function(const record_function&) = delete;
  record_function& operator=(const record_function&) = delete;

 private:
  bool open_ = false;
};

// Reads a trace written by export_chrome_trace back into key averages (ember profile FILE).
// Throws naming the file when it is unreadable or not such a trace.
KeyAverages load_chrome_trace(const std::string& path);

}  // namespace ember::profiler

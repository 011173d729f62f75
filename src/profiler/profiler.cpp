// The profiler's recorder (a record::Observer), its schedule and the profile's start/stop/step.
#include "ember/profiler.h"

#include <chrono>
#include <mutex>
#include <thread>

#include "core/record_scope.h"
#include "ember/error.h"
#include "ember/tensor.h"

namespace ember::profiler {

Schedule schedule(int64_t wait, int64_t warmup, int64_t active, int64_t repeat,
                  int64_t skip_first) {
  if (wait < 0 || warmup < 0 || active <= 0 || repeat < 0 || skip_first < 0) {
    throw ValueError("[profiler] schedule needs wait, warmup, repeat, skip_first >= 0 and " +
                     std::string("active > 0, got wait=") + std::to_string(wait) +
                     " warmup=" + std::to_string(warmup) + " active=" + std::to_string(active) +
                     " repeat=" + std::to_string(repeat));
  }
  return [=](int64_t step) {
    if (step < skip_first) return ProfilerAction::NONE;
    step -= skip_first;
    const int64_t cycle = wait + warmup + active;
    if (repeat > 0 && step / cycle >= repeat) return ProfilerAction::NONE;
    const int64_t pos = step % cycle;
    if (pos < wait) return ProfilerAction::NONE;
    if (pos < wait + warmup) return ProfilerAction::WARMUP;
    return pos == cycle - 1 ? ProfilerAction::RECORD_AND_SAVE : ProfilerAction::RECORD;
  };
}

// ---- the recorder ---------------------------------------------------------------------------

struct profile::State : record::Observer {
  ProfilerOptions options;
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  std::mutex mu;
  std::vector<Event> events;
  int64_t dropped = 0;
  uint64_t generation = 0;

  double now_us() const {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  }

  // Open events of this thread (indices into events; -2 marks a dropped one).
  struct Stack {
    uint64_t generation = ~uint64_t{0};
    std::vector<int64_t> open;
  };
  Stack& stack() {
    thread_local Stack s;
    if (s.generation != generation) {
      s.generation = generation;
      s.open.clear();
    }
    return s;
  }

  void enter(const record::Begin& b) override {
    Stack& s = stack();
    const double t = now_us();
    std::lock_guard<std::mutex> lock(mu);
    if (static_cast<int64_t>(events.size()) >= options.max_events) {
      ++dropped;
      s.open.push_back(-2);
      return;
    }
    Event e;
    e.name = std::string(b.name);
    e.kind = b.kind == record::Kind::op         ? "op"
             : b.kind == record::Kind::backward ? "backward"
                                                : "user";
    e.thread = std::hash<std::thread::id>()(std::this_thread::get_id()) % 1000003;
    e.id = static_cast<int64_t>(events.size());
    e.parent = -1;
    for (auto it = s.open.rbegin(); it != s.open.rend(); ++it) {
      if (*it >= 0) {
        e.parent = *it;
        break;
      }
    }
    e.depth = e.parent >= 0 ? events[e.parent].depth + 1 : 0;
    e.start_us = t;
    e.sequence_nr = b.sequence_nr;
    if (options.record_shapes) {
      for (size_t i = 0; i < b.num_inputs; ++i) {
        const Tensor* x = b.inputs[i];
        if (x == nullptr || !x->defined()) {
          e.input_shapes.emplace_back();
          e.input_dtypes.emplace_back("");
          continue;
        }
        e.input_shapes.emplace_back(x->sizes().begin(), x->sizes().end());
        e.input_dtypes.emplace_back(dtype_name(x->dtype()));
      }
    }
    s.open.push_back(e.id);
    events.push_back(std::move(e));
  }

  void exit() override {
    Stack& s = stack();
    if (s.open.empty()) return;  // opened before this profiler started
    const int64_t id = s.open.back();
    s.open.pop_back();
    if (id < 0) return;
    const double t = now_us();
    std::lock_guard<std::mutex> lock(mu);
    events[id].end_us = t;
  }

  void memory(const void*, int64_t delta, Device device) override {
    Stack& s = stack();
    std::lock_guard<std::mutex> lock(mu);
    for (auto it = s.open.rbegin(); it != s.open.rend(); ++it) {
      if (*it < 0) continue;
      Event& e = events[*it];
      (device.is_cpu() ? e.self_cpu_memory_usage : e.self_cuda_memory_usage) += delta;
      return;
    }
  }

  bool wants_memory() const override { return options.profile_memory; }

  // Closes what is still open, then derives self times and memory totals (children follow
  // their parents in start order, so one backward pass over the list sums them).
  std::vector<Event> finish() {
    const double t = now_us();
    std::lock_guard<std::mutex> lock(mu);
    std::vector<Event> out = std::move(events);
    events.clear();
    for (Event& e : out) {
      if (e.end_us < e.start_us) e.end_us = t;
      e.self_cpu_time_us = e.cpu_time_us();
      e.cpu_memory_usage = e.self_cpu_memory_usage;
      e.cuda_memory_usage = e.self_cuda_memory_usage;
    }
    for (size_t i = out.size(); i-- > 0;) {
      const Event& e = out[i];
      if (e.parent < 0) continue;
      Event& p = out[e.parent];
      p.self_cpu_time_us -= e.cpu_time_us();
      p.cpu_memory_usage += e.cpu_memory_usage;
      p.cuda_memory_usage += e.cuda_memory_usage;
    }
    for (Event& e : out) {
      if (e.self_cpu_time_us < 0) e.self_cpu_time_us = 0;
    }
    return out;
  }
};

// ---- profile --------------------------------------------------------------------------------

namespace {
bool records(ProfilerAction a) {
  return a == ProfilerAction::RECORD || a == ProfilerAction::RECORD_AND_SAVE;
}
}  // namespace

profile::profile(ProfilerOptions options) : options_(std::move(options)) {
  if (options_.max_events <= 0) {
    throw ValueError("[profiler] max_events must be positive, got " +
                     std::to_string(options_.max_events));
  }
  state_ = new State();
  state_->options = options_;
}

profile::~profile() {
  if (recording_) record::set_observer(nullptr);
  delete state_;
}

void profile::begin_recording() {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->events.clear();
    state_->dropped = 0;
    ++state_->generation;
  }
  if (!record::set_observer(state_)) {
    throw Error("[profiler] another profiler is already recording; stop it first");
  }
  recording_ = true;
}

void profile::end_recording(bool save) {
  record::set_observer(nullptr);
  recording_ = false;
  events_ = state_->finish();
  dropped_ = state_->dropped;
  if (save && options_.on_trace_ready) options_.on_trace_ready(*this);
}

void profile::start() {
  if (started_) throw Error("[profiler] start() called on a profiler that is already started");
  step_ = 0;
  if (!options_.schedule || records(options_.schedule(0))) begin_recording();
  started_ = true;
}

void profile::stop() {
  if (!started_) throw Error("[profiler] stop() called on a profiler that was not started");
  started_ = false;
  if (recording_) end_recording(true);
}

void profile::step() {
  if (!started_) throw Error("[profiler] step() called on a profiler that was not started");
  if (!options_.schedule) {
    ++step_;
    return;
  }
  const ProfilerAction prev = options_.schedule(step_);
  ++step_;
  const ProfilerAction next = options_.schedule(step_);
  if (recording_ && (prev == ProfilerAction::RECORD_AND_SAVE || !records(next))) {
    end_recording(prev == ProfilerAction::RECORD_AND_SAVE);
  }
  if (!recording_ && records(next)) begin_recording();
}

// ---- record_function ------------------------------------------------------------------------

record_function::record_function(const std::string& name) {
  if (record::active()) {
    record::detail::enter(nullptr, name, record::Kind::user, 0, nullptr, 0);
    open_ = true;
  }
}

record_function::~record_function() {
  if (open_) record::detail::exit();
}

}  // namespace ember::profiler

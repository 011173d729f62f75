// The monitor status file: an ember process that uses a GPU (`ember train`) publishes its caching
// allocator's view in a small file that `ember smi` reads, so a reservation can be told from the
// memory in use. One file per process, <runtime dir>/<pid>.status, replaced atomically.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ember::cli::monitor {

struct Status {
  unsigned pid = 0;
  unsigned long long start_time = 0;  // the process's start in clock ticks (/proc/PID/stat)
  std::string command;                // e.g. "train"
  int device = -1;                    // CUDA ordinal in that process
  std::string uuid;                   // that device's UUID (the key `ember smi` matches on)
  size_t allocated = 0, reserved = 0, peak_allocated = 0, peak_reserved = 0;  // bytes
  double updated = 0;  // Unix time of the reading
};

// $EMBER_RUNTIME_DIR, else $XDG_RUNTIME_DIR/ember, else /tmp/ember-<uid>.
std::string runtime_dir();

// When the process `pid` started (clock ticks since boot), or 0 when it does not exist.
unsigned long long process_start_time(unsigned pid);

// Publishes this process's status for CUDA device `device` every `interval_s` seconds from a
// background thread, and removes the file when destroyed. Never throws: a monitor that cannot
// write its file must not stop training (the reason is printed once to stderr).
class Publisher {
 public:
  Publisher(std::string command, int device, double interval_s = 1.0);
  ~Publisher();
  Publisher(const Publisher&) = delete;
  Publisher& operator=(const Publisher&) = delete;
  const std::string& path() const { return path_; }

 private:
  void write_once();
  std::string command_, uuid_, path_;
  int device_;
  double interval_s_;
  bool warned_ = false;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

// Every status file in the runtime directory whose process is alive (the same pid and start
// time); the files of dead processes are skipped.
std::vector<Status> read_live();

// One status as the file holds it ("key=value" lines), and back; parse returns false when a
// required key is missing.
std::string format_status(const Status& s);
bool parse_status(const std::string& text, Status& out);

}  // namespace ember::cli::monitor

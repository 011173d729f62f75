// The monitor status file: written by Publisher, read by `ember smi`.
#include "monitor_status.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "ember/cuda.h"

namespace ember::cli::monitor {

namespace fs = std::filesystem;

std::string runtime_dir() {
  if (const char* v = std::getenv("EMBER_RUNTIME_DIR"); v != nullptr && *v != '\0') return v;
  if (const char* v = std::getenv("XDG_RUNTIME_DIR"); v != nullptr && *v != '\0')
    return std::string(v) + "/ember";
  return "/tmp/ember-" + std::to_string(getuid());
}

unsigned long long process_start_time(unsigned pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(in, text)) return 0;
  // Field 2 (the name) may hold spaces and parentheses: count fields after the last ')'.
  const auto close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(text.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 22 && rest >> field; ++i) {
    if (i == 22) return std::strtoull(field.c_str(), nullptr, 10);
  }
  return 0;
}

std::string format_status(const Status& s) {
  std::ostringstream os;
  os << "pid=" << s.pid << "\nstart_time=" << s.start_time << "\ncommand=" << s.command
     << "\ndevice=" << s.device << "\nuuid=" << s.uuid << "\nallocated=" << s.allocated
     << "\nreserved=" << s.reserved << "\npeak_allocated=" << s.peak_allocated
     << "\npeak_reserved=" << s.peak_reserved << "\nupdated=" << std::fixed << s.updated << "\n";
  return os.str();
}

bool parse_status(const std::string& text, Status& out) {
  std::map<std::string, std::string> kv;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const auto eq = line.find('=');
    if (eq != std::string::npos) kv[line.substr(0, eq)] = line.substr(eq + 1);
  }
  for (const char* key : {"pid", "start_time", "device", "uuid", "allocated", "reserved"}) {
    if (kv.count(key) == 0) return false;
  }
  auto num = [&](const char* key) { return std::strtoull(kv[key].c_str(), nullptr, 10); };
  out.pid = static_cast<unsigned>(num("pid"));
  out.start_time = num("start_time");
  out.command = kv["command"];
  out.device = std::atoi(kv["device"].c_str());
  out.uuid = kv["uuid"];
  out.allocated = num("allocated");
  out.reserved = num("reserved");
  out.peak_allocated = num("peak_allocated");
  out.peak_reserved = num("peak_reserved");
  out.updated = std::strtod(kv["updated"].c_str(), nullptr);
  return out.pid != 0;
}

Publisher::Publisher(std::string command, int device, double interval_s)
    : command_(std::move(command)), device_(device), interval_s_(interval_s) {
  try {
    uuid_ = cuda::device_uuid(device);
    const std::string dir = runtime_dir();
    std::error_code ec;
    fs::create_directories(dir, ec);
    ::chmod(dir.c_str(), 0700);  // the directory is private to this user, like XDG_RUNTIME_DIR
    path_ = dir + "/" + std::to_string(getpid()) + ".status";
  } catch (const std::exception& e) {
    std::cerr << "ember " << command_ << ": the monitor status is off: " << e.what() << "\n";
    warned_ = true;
    return;
  }
  write_once();
  thread_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mutex_);
    const auto period = std::chrono::duration<double>(interval_s_);
    while (!wake_.wait_for(lock, period, [this] { return stop_; })) write_once();
  });
}

Publisher::~Publisher() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (!path_.empty()) {
    std::error_code ec;
    fs::remove(path_, ec);
  }
}

void Publisher::write_once() {
  Status s;
  s.pid = static_cast<unsigned>(getpid());
  s.start_time = process_start_time(s.pid);
  s.command = command_;
  s.device = device_;
  s.uuid = uuid_;
  try {
    const auto stats = cuda::memory_stats(device_);
    auto get = [&](const char* key) {
      auto it = stats.find(key);
      return it == stats.end() ? size_t{0} : static_cast<size_t>(it->second);
    };
    s.allocated = get("allocated_bytes.all.current");
    s.reserved = get("reserved_bytes.all.current");
    s.peak_allocated = get("allocated_bytes.all.peak");
    s.peak_reserved = get("reserved_bytes.all.peak");
  } catch (const std::exception&) {
    return;  // the device went away: keep the last reading
  }
  s.updated =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  // Write beside the file, then rename: a reader sees the old file or the new one, never half.
  const std::string tmp = path_ + ".tmp";
  bool ok = false;
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << format_status(s);
    ok = static_cast<bool>(out.flush());
  }
  if (ok) ok = std::rename(tmp.c_str(), path_.c_str()) == 0;
  if (!ok && !warned_) {
    warned_ = true;
    std::cerr << "ember " << command_ << ": cannot write the monitor status " << path_
              << " (ember smi will not show this process's allocator)\n";
  }
}

std::vector<Status> read_live() {
  std::vector<Status> out;
  std::error_code ec;
  for (fs::directory_iterator it(runtime_dir(), ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    if (p.extension() != ".status") continue;
    std::ifstream in(p);
    std::stringstream text;
    text << in.rdbuf();
    Status s;
    if (!parse_status(text.str(), s)) continue;
    // A file left by a process that died (or whose pid was reused since) is stale.
    if (s.start_time == 0 || process_start_time(s.pid) != s.start_time) continue;
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace ember::cli::monitor

#include "io/file_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string_view>

#include "ember/error.h"

namespace ember::io::detail {

namespace {

std::string dir_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string base_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Removes ".<base>.tmp.<pid>.*" files whose writer process no longer exists.
void remove_stale_temps(const std::string& dir, const std::string& base) {
  DIR* d = opendir(dir.c_str());
  if (!d) return;
  const std::string prefix = "." + base + ".tmp.";
  while (dirent* e = readdir(d)) {
    std::string_view name(e->d_name);
    if (name.substr(0, prefix.size()) != prefix) continue;
    std::string_view rest = name.substr(prefix.size());
    const size_t dot = rest.find('.');
    if (dot == 0 || dot == std::string_view::npos) continue;
    long pid = 0;
    bool numeric = true;
    for (char c : rest.substr(0, dot)) {
      if (c < '0' || c > '9' || pid > 1L << 40) {
        numeric = false;
        break;
      }
      pid = pid * 10 + (c - '0');
    }
    if (!numeric || pid == static_cast<long>(getpid())) continue;
    if (kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
      unlink((dir + "/" + std::string(name)).c_str());
    }
  }
  closedir(d);
}

std::atomic<uint64_t> temp_counter{0};

}  // namespace

AtomicFile::AtomicFile(std::string path, const char* op) : path_(std::move(path)), op_(op) {
  const std::string dir = dir_of(path_), base = base_of(path_);
  if (base.empty()) fail("not a file name", 0);
  remove_stale_temps(dir, base);
  temp_ = (dir == "." && path_.find('/') == std::string::npos ? "" : dir + "/") + "." + base +
          ".tmp." + std::to_string(getpid()) + "." + std::to_string(temp_counter++);
  fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd_ < 0) fail("cannot create temporary file '" + temp_ + "'", errno);
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(temp_.c_str());
  }
}

void AtomicFile::fail(const std::string& what, int err) const {
  throw Error("[" + std::string(op_) + "] '" + path_ + "': " + what +
              (err ? std::string(": ") + std::strerror(err) : std::string()));
}

void AtomicFile::write(const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd_, p, size < (size_t{1} << 30) ? size : (size_t{1} << 30));
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("write failed", errno);
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
}

void AtomicFile::commit() {
  if (::fsync(fd_) != 0) fail("fsync failed", errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(temp_.c_str());
    fail("close failed", err);
  }
  if (::rename(temp_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp_.c_str());
    fail("cannot rename '" + temp_ + "' over it", err);
  }
  const int dfd = ::open(dir_of(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

InputFile::InputFile(const std::string& path, const char* op) : path_(path), op_(op) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer; the type check
  // below then refuses it (regular files ignore the flag, which is cleared anyway).
  fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) {
    throw Error("[" + std::string(op) + "] '" + path + "': cannot open: " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw Error("[" + std::string(op) + "] '" + path + "': not a regular file");
  }
  const int flags = ::fcntl(fd_, F_GETFL);
  if (flags >= 0) ::fcntl(fd_, F_SETFL, flags & ~O_NONBLOCK);
  size_ = static_cast<uint64_t>(st.st_size);
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void InputFile::read_at(void* out, size_t size, uint64_t offset) const {
  char* p = static_cast<char*>(out);
  while (size > 0) {
    const ssize_t n = ::pread(fd_, p, size < (size_t{1} << 30) ? size : (size_t{1} << 30),
                              static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      throw Error("[" + std::string(op_) + "] '" + path_ + "': read failed at byte " +
                  std::to_string(offset) +
                  (n < 0 ? std::string(": ") + std::strerror(errno)
                         : std::string(": unexpected end of file")));
    }
    p += n;
    size -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
}

}  // namespace ember::io::detail

// POSIX file helpers for the io writers and readers: an atomically replaced output file and a
// read-only input file with exact-size reads. Errors are ember::Error starting with "[op] 'path':
// ".
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace ember::io::detail {

// A file written under a temporary name in the target's directory and renamed over the target by
// commit() after an fsync (then the directory is fsynced, so the rename itself is durable).
// Destroyed without commit, it removes the temporary file. Temporary names are
// ".<name>.tmp.<pid>.<n>"; opening one removes those left behind by dead writers.
class AtomicFile {
 public:
  AtomicFile(std::string path, const char* op);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, size_t size);
  void commit();
  const std::string& temp_path() const { return temp_; }

 private:
  [[noreturn]] void fail(const std::string& what, int err) const;
  std::string path_, temp_;
  const char* op_;
  int fd_ = -1;
};

// A file opened for reading; the size is taken once at open.
class InputFile {
 public:
  InputFile(const std::string& path, const char* op);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  uint64_t size() const { return size_; }
  // Reads exactly size bytes at offset (raises on a short read).
  void read_at(void* out, size_t size, uint64_t offset) const;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  const char* op_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

}  // namespace ember::io::detail

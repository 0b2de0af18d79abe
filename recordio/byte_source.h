// Where records are read from: a file (positional reads, so several threads
// can read one file at once) or bytes in memory (tests, fuzzing).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace recordio {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // The name used in error messages (the path for files).
  virtual const std::string& name() const = 0;
  virtual uint64_t size() const = 0;
  // Copies up to n bytes starting at offset into dst; returns how many were
  // copied (fewer only at the end). Safe to call from several threads.
  virtual size_t read_at(uint64_t offset, void* dst, size_t n) const = 0;
};

// A file opened for reading; its size is taken when it is opened. Throws
// FormatError when it cannot be opened or is not a regular file.
class FileSource final : public ByteSource {
 public:
  explicit FileSource(std::string path);
  ~FileSource() override;
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;

  const std::string& name() const override { return path_; }
  uint64_t size() const override { return size_; }
  size_t read_at(uint64_t offset, void* dst, size_t n) const override;

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

class MemorySource final : public ByteSource {
 public:
  MemorySource(std::string bytes, std::string name)
      : bytes_(std::move(bytes)), name_(std::move(name)) {}

  const std::string& name() const override { return name_; }
  uint64_t size() const override { return bytes_.size(); }
  size_t read_at(uint64_t offset, void* dst, size_t n) const override;

 private:
  std::string bytes_;
  std::string name_;
};

std::shared_ptr<const ByteSource> open_file(const std::string& path);

}  // namespace recordio

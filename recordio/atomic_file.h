// An output file that appears under its name only when complete: bytes go to
// "NAME.tmp.PID" and commit() renames it into place. Dropped without
// commit() (an error, an exception), the temporary file is removed and
// whatever was at NAME before is untouched.
#pragma once

#include <fstream>
#include <memory>
#include <string>

namespace recordio {

class AtomicFile {
 public:
  // Throws Error when the temporary file cannot be created.
  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::ostream& stream() { return out_; }
  const std::string& path() const { return path_; }
  // Flushes, closes and renames; throws Error (and removes the temporary
  // file) when any of it fails.
  void commit();

 private:
  std::string path_;
  std::string temp_;
  std::unique_ptr<char[]> buffer_;
  std::ofstream out_;
  bool committed_ = false;
};

}  // namespace recordio

// A folder of the fuzzing process's own, for parsers that read from a path:
// the target rewrites its input file there for each input, and the folder
// is removed when the process exits.
#pragma once

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace mx::fuzz {

class FuzzTempDir {
 public:
  explicit FuzzTempDir(const std::string& name) : path_("/tmp/mx-fuzz-" + name + "-XXXXXX") {
    if (mkdtemp(path_.data()) == nullptr) std::abort();
  }
  FuzzTempDir(const FuzzTempDir&) = delete;
  FuzzTempDir& operator=(const FuzzTempDir&) = delete;
  ~FuzzTempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace mx::fuzz

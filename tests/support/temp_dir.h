// A scratch directory for one test, removed when the test ends (even when a
// check fails and throws). It lies under the build tree (MX_TEST_TMP_DIR), so
// a test that crashes leaves its files next to the build, not in the
// system temporary folder.
#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>

#include "test_paths.h"

#ifndef MX_TEST_TMP_DIR
#error "MX_TEST_TMP_DIR (a folder in the build tree) must be defined by the build"
#endif

namespace mx::test {

class TempDir {
 public:
  explicit TempDir(const std::string& tag = "test") {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::path(test_tmp_dir()) /
            (tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace mx::test

// Where tests find their fixtures and scratch space: the build's folders
// (MX_FIXTURES_DIR, MX_TEST_TMP_DIR, compiled in), or the environment
// variables of the same names, for test programs copied to another machine
// (scripts/gpu-bundle.sh).
#pragma once

#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

namespace mx::test {

inline std::string path_from_env(const char* name, const char* built_in) {
  const char* env = std::getenv(name);
  return env != nullptr && *env != '\0' ? std::string(env) : std::string(built_in);
}

#ifdef MX_FIXTURES_DIR
inline std::string fixtures_dir() { return path_from_env("MX_FIXTURES_DIR", MX_FIXTURES_DIR); }
#endif
#ifdef MX_TEST_TMP_DIR
inline std::string test_tmp_dir() { return path_from_env("MX_TEST_TMP_DIR", MX_TEST_TMP_DIR); }
#endif

// A regular file that claims bytes but whose reads fail, to test how a
// reader reports an I/O error: the loopback device's link speed, a sysfs
// file of 4096 bytes that the kernel refuses to read. None where /sys lacks
// it or reads it (then the test says it skipped).
inline std::optional<std::string> unreadable_file() {
  const std::string path = "/sys/class/net/lo/speed";
  std::ifstream probe(path);
  if (probe && probe.get() == std::char_traits<char>::eof()) return path;
  return std::nullopt;
}

}  // namespace mx::test

// Feeds arbitrary text to the config loader: YAML files with includes, and
// command-line overrides. The input is split at lines "%%" into main.yaml,
// base.yaml and extra.yaml (which main.yaml may include, as they may each
// other) and a last part of overrides, one per line. Loading must succeed
// or throw InputError, never crash or hang; a loaded config must answer
// every typed getter the same way and print as YAML that loads back with
// the same keys (the saved config.yaml of a run repeats it).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/strings.h"
#include "fuzz_temp_dir.h"
#include "train/config.h"

namespace {

const std::string& work_dir() {
  static const mx::fuzz::FuzzTempDir made("config");  // removed at exit
  static const std::string dir = made.path();
  return dir;
}

std::vector<std::string> split_parts(const std::string& text) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    const size_t at = text.find("\n%%\n", start);
    if (at == std::string::npos) break;
    parts.push_back(text.substr(start, at - start));
    start = at + 4;
  }
  parts.push_back(text.substr(start));
  return parts;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto parts = split_parts(std::string(reinterpret_cast<const char*>(data), size));
  const char* names[] = {"main.yaml", "base.yaml", "extra.yaml"};
  for (size_t i = 0; i < 3; ++i) {
    std::ofstream out(work_dir() + "/" + names[i], std::ios::binary | std::ios::trunc);
    if (i < parts.size() && (i + 1 < parts.size() || i == 0)) out << parts[i];
  }
  std::vector<std::string> overrides;
  if (parts.size() > 1)
    for (const auto& line : mx::split(parts.back(), '\n'))
      if (!line.empty() && overrides.size() < 8) overrides.push_back(line);
  try {
    auto config = mx::train::Config::load(work_dir() + "/main.yaml", overrides);
    for (const auto& key : config.keys()) {
      config.origin(key);
      for (auto get :
           {+[](const mx::train::Config&c, const std::string&k) { c.get_int(k, 0); },
            +[](const mx::train::Config&c, const std::string&k) { c.get_double(k, 0); },
            +[](const mx::train::Config&c, const std::string&k) { c.get_bool(k, 0); },
            +[](const mx::train::Config&c, const std::string&k) { c.get_list(k, {}); },
            +[](const mx::train::Config&c, const std::string&k) { c.get_string(k, ""); }}) {
        try {
          get(config, key);
        } catch (const mx::InputError&) {
        }
      }
      const auto dot = key.rfind('.');
      if (dot != std::string::npos) config.section(key.substr(0, dot));
    }
    const std::string yaml = config.to_yaml();
    if (mx::train::Config::from_string(yaml, "printed config").keys() != config.keys())
      __builtin_trap();
  } catch (const mx::InputError&) {
  }
  return 0;
}

// README.md's environment table against the one list of runtime settings
// (base/runtime_config.h), both ways: every setting has a row and every row
// names a setting. And the list stays the one place: nothing else in lib/
// or cmd/ reads the environment (cmd/program.h's OPENBLAS_CORETYPE, read
// before the program starts itself again, aside).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "base/runtime_config.h"

namespace fs = std::filesystem;

namespace {

const fs::path kSource = MX_SOURCE_DIR;

std::string read(const fs::path& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot read ", path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The variables named in the first column of the table under "## Environment".
std::set<std::string> documented_variables() {
  const std::string readme = read(kSource / "README.md");
  const size_t start = readme.find("\n## Environment\n");
  REQUIRE_MESSAGE(start != std::string::npos, "README.md has no '## Environment' section");
  const size_t end = readme.find("\n## ", start + 1);
  const std::string section =
      readme.substr(start, end == std::string::npos ? std::string::npos : end - start);
  std::set<std::string> names;
  static const std::regex row(R"(\n\| `([A-Z][A-Z0-9_]*)` \|)");
  for (std::sregex_iterator it(section.begin(), section.end(), row), last; it != last; ++it)
    names.insert((*it)[1]);
  return names;
}

}  // namespace

TEST_CASE("README.md's environment table lists exactly the runtime settings") {
  const std::set<std::string> documented = documented_variables();
  std::set<std::string> listed;
  for (const mx::RuntimeSetting& s : mx::runtime_settings()) listed.insert(s.name);
  for (const std::string& name : listed)
    CHECK_MESSAGE(documented.count(name) == 1, name,
                  " is a runtime setting (lib/base/runtime_config.cc) but has no row in "
                  "README.md's environment table");
  for (const std::string& name : documented)
    CHECK_MESSAGE(listed.count(name) == 1, name,
                  " has a row in README.md's environment table but is not a runtime setting "
                  "(lib/base/runtime_config.cc)");
  MESSAGE("README.md's environment table lists the ", listed.size(), " runtime settings");
}

TEST_CASE("only the runtime configuration reads the environment") {
  const std::set<fs::path> allowed{kSource / "lib/base/runtime_config.cc",
                                   kSource / "cmd/program.h"};
  std::vector<std::string> readers;
  for (const char* dir : {"lib", "cmd"}) {
    for (const auto& entry : fs::recursive_directory_iterator(kSource / dir)) {
      const std::string ext = entry.path().extension().string();
      if (!entry.is_regular_file() || (ext != ".cc" && ext != ".h" && ext != ".cu")) continue;
      if (allowed.count(entry.path())) continue;
      if (read(entry.path()).find("getenv") != std::string::npos)
        readers.push_back(fs::relative(entry.path(), kSource).string());
    }
  }
  CHECK_MESSAGE(readers.empty(), "read the environment outside lib/base/runtime_config.cc: ",
                readers.size() == 0 ? std::string() : readers.front());
}

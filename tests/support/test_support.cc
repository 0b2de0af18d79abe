// The helpers every other test relies on must be able to fail: a comparison
// that let NaN through made whole suites pass on broken kernels.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <vector>

#include "compare.h"
#include "temp_dir.h"

using mx::test::closeness;
using mx::test::compare_values;

TEST_CASE("closeness: NaN, infinities and sizes are never close by accident") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> want{1.0, -2.0, 3.0};
  CHECK(closeness(want, want, 1e-4, 1e-6) == 0.0);
  CHECK(closeness(std::vector<double>{1.0, -2.0, 3.0001}, want, 1e-3, 0) <= 1.0);
  CHECK(closeness(std::vector<double>{1.0, -2.0, 3.1}, want, 1e-3, 0) > 1.0);
  // A NaN computed where a number is expected, anywhere, fails.
  for (size_t i = 0; i < want.size(); ++i) {
    auto got = want;
    got[i] = nan;
    CAPTURE(i);
    CHECK_FALSE(closeness(got, want, 1e-4, 1e-6) <= 1.0);
    CHECK(compare_values(got, want, 1e-4, 1e-6).index == i);
  }
  // Every output NaN (the case the old helpers passed).
  CHECK_FALSE(closeness(std::vector<double>(3, nan), want, 1e-4, 1e-6) <= 1.0);
  // An expected NaN must be met by NaN.
  CHECK_FALSE(closeness(want, std::vector<double>{1.0, nan, 3.0}, 1e-4, 1e-6) <= 1.0);
  CHECK(closeness(std::vector<double>{1.0, nan, 3.0}, std::vector<double>{1.0, nan, 3.0}, 1e-4,
                  1e-6) == 0.0);
  // Infinities: the same one matches, the other or a number does not
  // (inf - -inf over inf is NaN, which once slipped through).
  CHECK(closeness(std::vector<double>{inf}, std::vector<double>{inf}, 1e-4, 1e-6) == 0.0);
  CHECK_FALSE(closeness(std::vector<double>{-inf}, std::vector<double>{inf}, 1e-4, 1e-6) <= 1.0);
  CHECK_FALSE(closeness(std::vector<double>{1e300}, std::vector<double>{inf}, 1e-4, 1e-6) <= 1.0);
  CHECK_FALSE(closeness(std::vector<double>{1.0, 2.0}, want, 1e-4, 1e-6) <= 1.0);
}

TEST_CASE("TempDir lies under the build tree and is removed even when a test throws") {
  std::filesystem::path where;
  try {
    mx::test::TempDir dir("support");
    where = dir.path();
    CHECK(where.string().rfind(MX_TEST_TMP_DIR, 0) == 0);
    std::ofstream(dir.file("a.txt")) << "x";
    std::filesystem::create_directories(dir.path() / "sub");
    std::ofstream(dir.path() / "sub" / "b.txt") << "y";
    throw std::runtime_error("a failed check");
  } catch (const std::runtime_error&) {
  }
  CHECK_FALSE(where.empty());
  CHECK_FALSE(std::filesystem::exists(where));
}

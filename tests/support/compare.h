// The one comparison of computed values against expected ones, shared by the
// operator harness, the network tests and the optimizer tests.
//
// NaN must meet NaN and an infinity the same infinity; a NaN or infinity on
// one side only, or a size mismatch, is as far as values can be (+inf), so a
// kernel that produces NaN can never pass by accident (`x > worst` and
// `std::max(worst, x)` both ignore a NaN x).
#pragma once

#include <cmath>
#include <cstddef>
#include <limits>
#include <span>

namespace mx::test {

struct Closeness {
  double worst = 0;  // max |got - want| / (atol + rtol |want|); <= 1 means close
  size_t index = 0;  // where it is (0 when every element is close to 0)
};

inline Closeness compare_values(std::span<const double> got, std::span<const double> want,
                                double rtol, double atol) {
  constexpr double kFar = std::numeric_limits<double>::infinity();
  if (got.size() != want.size()) return {kFar, 0};
  Closeness c;
  for (size_t i = 0; i < got.size(); ++i) {
    const double a = got[i], b = want[i];
    double err;
    if (std::isnan(a) || std::isnan(b))
      err = std::isnan(a) && std::isnan(b) ? 0 : kFar;
    else if (std::isinf(a) || std::isinf(b))
      err = a == b ? 0 : kFar;
    else
      err = std::abs(a - b) / (atol + rtol * std::abs(b));
    if (!(err <= c.worst)) c = {err, i};  // written so that a NaN err could not hide
  }
  return c;
}

inline double closeness(std::span<const double> got, std::span<const double> want, double rtol,
                        double atol) {
  return compare_values(got, want, rtol, atol).worst;
}

}  // namespace mx::test

// Vectorised math: every instruction set this CPU runs agrees with the
// correctly rounded result (std:: in double, rounded to float) within a few
// ulp over the whole float range, at the special values, and with the
// scalar fallback; the bfloat16 conversions bit for bit as bf16_t's.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "base/bfloat16.h"
#include "op/vmath/vmath.h"

namespace vm = mx::op::vmath;

namespace {

struct Case {
  const char* name;
  vm::UnaryFn vm::Kernels::*kernel;
  double (*truth)(double);
  int64_t max_ulp;
  // Results below this magnitude count as equal: a function built on e^x
  // in float (sigmoid, softrelu, erf) flushes what lies under e^-104 to 0,
  // as the std:: formula in float does.
  float floor;
};

double sigmoid_d(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double softrelu_d(double x) {
  return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}
double exp_d(double x) { return std::exp(x); }
double expm1_d(double x) { return std::expm1(x); }
double log_d(double x) { return std::log(x); }
double tanh_d(double x) { return std::tanh(x); }
double erf_d(double x) { return std::erf(x); }

const std::vector<Case>& cases() {
  static const std::vector<Case> all{
      {"exp", &vm::Kernels::exp, exp_d, 2, 0.0f},
      {"expm1", &vm::Kernels::expm1, expm1_d, 4, 0.0f},
      {"log", &vm::Kernels::log, log_d, 2, 0.0f},
      {"tanh", &vm::Kernels::tanh, tanh_d, 3, 0.0f},
      {"sigmoid", &vm::Kernels::sigmoid, sigmoid_d, 3, FLT_MIN},
      {"softrelu", &vm::Kernels::softrelu, softrelu_d, 3, FLT_MIN},
      {"erf", &vm::Kernels::erf, erf_d, 3, 0.0f},
  };
  return all;
}

// Floats in order as integers, so that the difference counts the floats
// between two values (+0 and -0 coincide).
int64_t ordered(float x) {
  const auto b = std::bit_cast<int32_t>(x);
  return b < 0 ? int64_t{INT32_MIN} - b : b;
}

int64_t ulp_distance(float got, float want, float floor) {
  if (std::isnan(want) || std::isnan(got))
    return std::isnan(want) && std::isnan(got) ? 0 : INT64_MAX;
  if (std::abs(want) < floor && std::abs(got) < floor) return 0;
  if (std::isinf(want) || std::isinf(got)) return got == want ? 0 : INT64_MAX;
  const int64_t d = ordered(got) - ordered(want);
  return d < 0 ? -d : d;
}

// Every 2039th float (both signs, denormals, huge values) plus the special
// values and the points where the kernels switch formulas.
std::vector<float> inputs() {
  std::vector<float> xs;
  for (uint64_t b = 0; b < 0x7f800000u; b += 2039) {
    const float x = std::bit_cast<float>(static_cast<uint32_t>(b));
    xs.push_back(x);
    xs.push_back(-x);
  }
  const float inf = std::numeric_limits<float>::infinity();
  for (float x :
       {0.0f,    -0.0f,        inf,      -inf,       std::numeric_limits<float>::quiet_NaN(),
        FLT_MIN, FLT_TRUE_MIN, FLT_MAX,  -FLT_MAX,   0.625f,
        0.7f,    -0.7f,        1.0f,     -1.0f,      4.0f,
        10.0f,   88.72283f,    88.7229f, -87.33654f, -103.97208f,
        -104.0f, 89.0f,        20.0f,    1e-8f}) {
    xs.push_back(x);
    xs.push_back(std::nextafter(x, inf));
    xs.push_back(std::nextafter(x, -inf));
  }
  return xs;
}

std::vector<vm::Isa> simd_isas() {
  std::vector<vm::Isa> isas;
  for (vm::Isa isa : {vm::Isa::kAvx2, vm::Isa::kAvx512})
    if (vm::supported(isa)) isas.push_back(isa);
  return isas;
}

}  // namespace

TEST_CASE("every supported instruction set is within a few ulp of the true result") {
  const std::vector<float> xs = inputs();
  std::vector<float> want(xs.size()), out(xs.size());
  std::vector<vm::Isa> isas = simd_isas();
  isas.push_back(vm::Isa::kScalar);
  for (const Case& c : cases()) {
    for (size_t i = 0; i < xs.size(); ++i)
      want[i] = static_cast<float>(c.truth(static_cast<double>(xs[i])));
    for (vm::Isa isa : isas) {
      (vm::kernels(isa).*c.kernel)(xs.data(), out.data(), static_cast<int64_t>(xs.size()));
      int64_t worst = 0;
      float worst_x = 0;
      for (size_t i = 0; i < xs.size(); ++i) {
        const int64_t d = ulp_distance(out[i], want[i], c.floor);
        if (d > worst) worst = d, worst_x = xs[i];
      }
      INFO(std::string(vm::isa_name(isa)), " ", std::string(c.name), ": worst ", worst,
           " ulp at x = ", worst_x);
      MESSAGE(std::string(vm::isa_name(isa)), " ", std::string(c.name), ": worst ", worst,
              " ulp at x = ", worst_x);
      CHECK(worst <= c.max_ulp);
    }
  }
}

TEST_CASE("special values: NaN, infinities, zeros, denormals") {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<vm::Isa> isas = simd_isas();
  isas.push_back(vm::Isa::kScalar);
  for (vm::Isa isa : isas) {
    INFO(std::string(vm::isa_name(isa)));
    const vm::Kernels& k = vm::kernels(isa);
    auto f = [](vm::UnaryFn fn, float x) {
      float y = 0;
      fn(&x, &y, 1);
      return y;
    };
    for (vm::UnaryFn fn : {k.exp, k.expm1, k.log, k.tanh, k.sigmoid, k.softrelu, k.erf})
      CHECK(std::isnan(f(fn, nan)));
    CHECK(f(k.exp, inf) == inf);
    CHECK(f(k.exp, -inf) == 0.0f);
    CHECK(f(k.exp, 89.0f) == inf);
    CHECK(f(k.exp, -88.0f) == std::exp(-88.0f));  // a denormal result
    CHECK(f(k.exp, -103.0f) == std::exp(-103.0f));
    CHECK(f(k.expm1, -inf) == -1.0f);
    CHECK(f(k.expm1, inf) == inf);
    CHECK(f(k.log, 0.0f) == -inf);
    CHECK(f(k.log, -0.0f) == -inf);
    CHECK(f(k.log, inf) == inf);
    CHECK(std::isnan(f(k.log, -1.0f)));
    CHECK(std::isnan(f(k.log, -inf)));
    CHECK(f(k.log, FLT_TRUE_MIN) == std::log(FLT_TRUE_MIN));
    CHECK(f(k.tanh, inf) == 1.0f);
    CHECK(f(k.tanh, -inf) == -1.0f);
    CHECK(std::signbit(f(k.tanh, -0.0f)));
    CHECK(f(k.tanh, FLT_TRUE_MIN) == FLT_TRUE_MIN);
    CHECK(f(k.sigmoid, inf) == 1.0f);
    CHECK(f(k.sigmoid, -inf) == 0.0f);
    CHECK(f(k.softrelu, inf) == inf);
    CHECK(f(k.softrelu, -inf) == 0.0f);
    CHECK(f(k.softrelu, 100.0f) == 100.0f);
    CHECK(f(k.erf, inf) == 1.0f);
    CHECK(f(k.erf, -inf) == -1.0f);
    CHECK(f(k.erf, FLT_TRUE_MIN) == std::erf(FLT_TRUE_MIN));
  }
}

TEST_CASE("the SIMD kernels match the scalar fallback, for any length and in place") {
  const std::vector<vm::Isa> isas = simd_isas();
  if (isas.empty()) MESSAGE("this CPU has neither AVX2 nor AVX-512: only the scalar kernels run");
  const vm::Kernels& scalar = vm::kernels(vm::Isa::kScalar);
  for (vm::Isa isa : isas) {
    for (const Case& c : cases()) {
      // Lengths around the register widths exercise the partial last block.
      for (int64_t n : {1, 7, 8, 15, 16, 17, 33, 1000}) {
        std::vector<float> x(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i)
          x[static_cast<size_t>(i)] = -6.0f + 0.37f * static_cast<float>(i % 40);
        if (c.kernel == &vm::Kernels::log)
          for (float& v : x) v = std::abs(v) + 0.01f;
        std::vector<float> want(x.size()), got = x;
        (scalar.*c.kernel)(x.data(), want.data(), n);
        (vm::kernels(isa).*c.kernel)(got.data(), got.data(), n);  // in place
        for (size_t i = 0; i < x.size(); ++i) {
          INFO(std::string(vm::isa_name(isa)), " ", std::string(c.name), " n=", n, " x=", x[i]);
          CHECK(ulp_distance(got[i], want[i], c.floor) <= c.max_ulp + 1);
        }
      }
    }
  }
}

TEST_CASE("Dropout's mask: every instruction set draws the same, by index alone") {
  std::vector<vm::Isa> isas = simd_isas();
  isas.push_back(vm::Isa::kScalar);
  const uint64_t seed = 0x0123456789abcdefull;
  const float scale = 1.0f / 0.7f;
  const auto threshold = static_cast<uint32_t>(std::ldexp(0.7, 32));
  // Starts around the register widths and across a multiple of 2^32.
  for (uint64_t first : {uint64_t{0}, uint64_t{3}, (uint64_t{1} << 32) - 21}) {
    for (int64_t n : {1, 7, 16, 17, 33, 1000}) {
      INFO("first=", first, " n=", n);
      std::vector<float> x(static_cast<size_t>(n)), want_y(x.size()), want_mask(x.size());
      for (size_t i = 0; i < x.size(); ++i) x[i] = 0.5f + 0.01f * static_cast<float>(i % 97);
      vm::kernels(vm::Isa::kScalar)
          .dropout(x.data(), want_y.data(), want_mask.data(), n, first, seed, threshold, scale);
      for (size_t i = 0; i < x.size(); ++i) {
        REQUIRE((want_mask[i] == 0.0f || want_mask[i] == scale));
        REQUIRE(want_y[i] == x[i] * want_mask[i]);
      }
      for (vm::Isa isa : isas) {
        INFO(std::string(vm::isa_name(isa)));
        std::vector<float> y = x, mask(x.size()), mask_only(x.size());
        vm::kernels(isa).dropout(y.data(), y.data(), mask.data(), n, first, seed, threshold,
                                 scale);  // in place
        vm::kernels(isa).dropout(nullptr, nullptr, mask_only.data(), n, first, seed, threshold,
                                 scale);
        CHECK(mask == want_mask);
        CHECK(mask_only == want_mask);
        CHECK(y == want_y);
      }
      // A part of the stream drawn on its own is the same part of the whole.
      if (n > 17) {
        std::vector<float> part(10);
        vm::kernels(vm::Isa::kScalar)
            .dropout(nullptr, nullptr, part.data(), 10, first + 7, seed, threshold, scale);
        CHECK(std::equal(part.begin(), part.end(), want_mask.begin() + 7));
      }
    }
  }
  // About the keep probability, and another seed draws another mask.
  std::vector<float> a(100000), b(a.size());
  vm::active().dropout(nullptr, nullptr, a.data(), 100000, 0, seed, threshold, scale);
  vm::active().dropout(nullptr, nullptr, b.data(), 100000, 0, seed + 1, threshold, scale);
  const auto kept = std::count(a.begin(), a.end(), scale);
  CHECK(static_cast<double>(kept) / 1e5 == doctest::Approx(0.7).epsilon(0.02));
  CHECK(a != b);
}

TEST_CASE("softmax rows and their gradient: every instruction set as the scalar kernel") {
  std::vector<vm::Isa> isas = simd_isas();
  isas.push_back(vm::Isa::kScalar);
  const vm::Kernels& scalar = vm::kernels(vm::Isa::kScalar);
  for (int64_t n : {1, 7, 16, 17, 64, 1000, 5000}) {
    for (float inv_t : {1.0f, 0.5f}) {
      std::vector<float> x(static_cast<size_t>(n)), g(x.size());
      for (size_t i = 0; i < x.size(); ++i) {
        x[i] = -8.0f + 0.37f * static_cast<float>(i % 53);
        g[i] = 0.25f * static_cast<float>(i % 7) - 0.6f;
      }
      if (n > 3) x[2] = -std::numeric_limits<float>::infinity();  // a masked entry
      std::vector<float> want(x.size()), want_dx(x.size());
      scalar.softmax_row(x.data(), want.data(), n, inv_t);
      scalar.softmax_row_backward(want.data(), g.data(), want_dx.data(), n, inv_t);
      double total = 0;
      for (float v : want) total += v;
      CHECK(total == doctest::Approx(1.0).epsilon(1e-5));
      for (vm::Isa isa : isas) {
        INFO(std::string(vm::isa_name(isa)), " n=", n, " inv_t=", inv_t);
        std::vector<float> y = x, dx = g;
        vm::kernels(isa).softmax_row(y.data(), y.data(), n, inv_t);  // in place
        vm::kernels(isa).softmax_row_backward(want.data(), dx.data(), dx.data(), n, inv_t);
        for (size_t i = 0; i < y.size(); ++i) {
          REQUIRE(y[i] == doctest::Approx(want[i]).epsilon(2e-6));
          REQUIRE(dx[i] == doctest::Approx(want_dx[i]).epsilon(2e-5).scale(1e-6));
        }
        if (n > 3) CHECK(y[2] == 0.0f);
      }
    }
  }
  // A NaN anywhere in a row makes the whole row NaN.
  for (vm::Isa isa : isas) {
    std::vector<float> x(40, 1.0f), y(40);
    x[33] = std::numeric_limits<float>::quiet_NaN();
    vm::kernels(isa).softmax_row(x.data(), y.data(), 40, 1.0f);
    for (float v : y) REQUIRE(std::isnan(v));
  }
}

TEST_CASE("GELU and its gradient: every instruction set against float64, any length, in place") {
  std::vector<vm::Isa> isas = simd_isas();
  isas.push_back(vm::Isa::kScalar);
  const auto phi = [](double v) { return std::exp(-0.5 * v * v) / std::sqrt(2.0 * M_PI); };
  const auto cdf = [](double v) { return 0.5 * (1.0 + std::erf(v / std::sqrt(2.0))); };
  for (int64_t n : {1, 7, 8, 15, 16, 17, 33, 1000}) {
    std::vector<float> x(static_cast<size_t>(n)), dy(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      x[i] = -7.0f + 0.29f * static_cast<float>(i % 49);  // both erf branches, and the tails
      dy[i] = 0.5f - 0.125f * static_cast<float>(i % 9);
    }
    for (vm::Isa isa : isas) {
      std::vector<float> y = x, dx = dy;
      vm::kernels(isa).gelu(y.data(), y.data(), n);                       // in place
      vm::kernels(isa).gelu_backward(x.data(), dx.data(), dx.data(), n);  // dx is dy
      for (size_t i = 0; i < x.size(); ++i) {
        INFO(std::string(vm::isa_name(isa)), " n=", n, " x=", x[i]);
        // float rounds 1 + erf to a multiple of 2^-24 near 0: the absolute error's floor.
        const double v = x[i], g = dy[i];
        REQUIRE(std::abs(y[i] - v * cdf(v)) <= 4e-7 * std::abs(v) + 2e-6 * std::abs(v * cdf(v)));
        const double want = g * (cdf(v) + v * phi(v));
        REQUIRE(std::abs(dx[i] - want) <= 4e-7 * std::abs(g) + 2e-6 * std::abs(want));
      }
    }
  }
}

TEST_CASE("LayerNorm rows: every instruction set against float64, far-off means included") {
  std::vector<vm::Isa> isas = simd_isas();
  isas.push_back(vm::Isa::kScalar);
  for (int64_t n : {1, 7, 16, 17, 128, 1000}) {
    for (float offset : {0.0f, 3000.0f}) {  // a mean large against the spread
      const auto size = static_cast<size_t>(n);
      std::vector<float> x(size), dy(size), gamma(size), beta(size);
      for (size_t i = 0; i < size; ++i) {
        x[i] = offset + 0.75f * static_cast<float>(static_cast<int>(i * 7 % 13) - 6);
        dy[i] = 0.2f * static_cast<float>(static_cast<int>(i % 5) - 2) + 0.05f;
        gamma[i] = 1.0f + 0.01f * static_cast<float>(i % 11);
        beta[i] = 0.1f * static_cast<float>(i % 3);
      }
      // float64 truth
      double mean = 0, var = 0, sum_g = 0, sum_gx = 0;
      for (float v : x) mean += v;
      mean /= static_cast<double>(n);
      for (float v : x) var += (v - mean) * (v - mean);
      var /= static_cast<double>(n);
      const double rstd = 1.0 / std::sqrt(var + 1e-5);
      for (size_t i = 0; i < size; ++i) {
        sum_g += static_cast<double>(dy[i]) * gamma[i];
        sum_gx += static_cast<double>(dy[i]) * gamma[i] * (x[i] - mean);
      }
      for (vm::Isa isa : isas) {
        INFO(std::string(vm::isa_name(isa)), " n=", n, " offset=", offset);
        const vm::Kernels& k = vm::kernels(isa);
        double sum = 0, sq = 0;
        k.row_sums(x.data(), n, x[0], &sum, &sq);
        const double m = x[0] + sum / static_cast<double>(n);
        CHECK(m == doctest::Approx(mean).epsilon(1e-12));
        CHECK(sq / static_cast<double>(n) - (m - x[0]) * (m - x[0]) ==
              doctest::Approx(var).epsilon(1e-9).scale(1e-12));
        std::vector<float> y(size), dx = dy;
        k.normalize_row(x.data(), gamma.data(), beta.data(), y.data(), n, static_cast<float>(mean),
                        static_cast<float>(rstd));
        double got_g = 0, got_gx = 0;
        k.norm_grad_sums(x.data(), dy.data(), gamma.data(), n, mean, &got_g, &got_gx);
        CHECK(got_g == doctest::Approx(sum_g).epsilon(1e-12).scale(1e-12));
        CHECK(got_gx == doctest::Approx(sum_gx).epsilon(1e-12).scale(1e-12));
        const double mean_g = sum_g / static_cast<double>(n);
        const double kk = sum_gx * rstd * rstd / static_cast<double>(n);
        k.norm_grad_row(x.data(), dx.data(), gamma.data(), dx.data(), n, static_cast<float>(mean),
                        static_cast<float>(mean_g), static_cast<float>(kk),
                        static_cast<float>(rstd));                 // dx is dy
        std::vector<double> dgamma(size, 1.0), dbeta(size, -1.0);  // accumulated onto
        k.norm_param_grad_row(x.data(), dy.data(), n, mean, rstd, dgamma.data(), dbeta.data());
        // float32's rounding of x - mean: of the mean's own rounding where it is large.
        const double tol = offset > 0 ? 2e-3 : 2e-5;
        for (size_t i = 0; i < size; ++i) {
          const double xhat = (x[i] - mean) * rstd;
          const double g = static_cast<double>(dy[i]) * gamma[i];
          REQUIRE(y[i] == doctest::Approx(xhat * gamma[i] + beta[i]).scale(1).epsilon(tol));
          REQUIRE(dx[i] ==
                  doctest::Approx((g - mean_g - (x[i] - mean) * kk) * rstd).scale(1).epsilon(tol));
          REQUIRE(dgamma[i] == doctest::Approx(1.0 + dy[i] * xhat).epsilon(1e-12));
          REQUIRE(dbeta[i] == doctest::Approx(-1.0 + dy[i]).epsilon(1e-12));
        }
      }
    }
  }
}

TEST_CASE("bfloat16 conversions: every value and length, bit for bit as bf16_t") {
  std::vector<vm::Isa> isas = simd_isas();
  isas.push_back(vm::Isa::kScalar);
  // Every bfloat16 bit pattern widens to its float.
  std::vector<uint16_t> all(65536);
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint16_t>(i);
  // Floats that round: ties to even both ways, just above and below a tie,
  // signalling and quiet NaNs of both signs, infinities, denormals, and a
  // sweep of bit patterns.
  std::vector<uint32_t> bits = {0x3f808000u, 0x3f818000u, 0x3f808001u, 0x3f807fffu, 0x7f800001u,
                                0xff800001u, 0x7fc00000u, 0xffffffffu, 0x7f800000u, 0xff800000u,
                                0x00000001u, 0x807fffffu, 0x7f7fffffu, 0x00000000u, 0x80000000u};
  for (uint32_t b = 0; b < 4000000u; ++b) bits.push_back(b * 1073u + (b & 0x1ffffu));
  std::vector<float> floats(bits.size());
  for (size_t i = 0; i < bits.size(); ++i) floats[i] = std::bit_cast<float>(bits[i]);
  for (vm::Isa isa : isas) {
    INFO(std::string(vm::isa_name(isa)));
    const vm::Kernels& k = vm::kernels(isa);
    std::vector<float> wide(all.size());
    k.widen_bf16(all.data(), wide.data(), static_cast<int64_t>(all.size()));
    for (size_t i = 0; i < all.size(); ++i)
      REQUIRE(std::bit_cast<uint32_t>(wide[i]) == static_cast<uint32_t>(all[i]) << 16);
    std::vector<uint16_t> narrow(floats.size());
    k.round_bf16(floats.data(), narrow.data(), static_cast<int64_t>(floats.size()));
    for (size_t i = 0; i < floats.size(); ++i) {
      INFO("float bits " << bits[i]);
      REQUIRE(narrow[i] == mx::bf16_t::from_float(floats[i]));
    }
    // Lengths around the register widths: the tail is converted, nothing after it touched.
    for (int64_t n : {1, 7, 8, 15, 16, 17, 33}) {
      std::vector<uint16_t> out(static_cast<size_t>(n) + 4, 0xabcdu);
      k.round_bf16(floats.data(), out.data(), n);
      for (int64_t i = 0; i < n; ++i)
        CHECK(out[static_cast<size_t>(i)] ==
              mx::bf16_t::from_float(floats[static_cast<size_t>(i)]));
      for (size_t i = static_cast<size_t>(n); i < out.size(); ++i) CHECK(out[i] == 0xabcdu);
      std::vector<float> back(static_cast<size_t>(n) + 4, 7.0f);
      k.widen_bf16(all.data() + 0x3f00, back.data(), n);
      for (int64_t i = 0; i < n; ++i)
        CHECK(std::bit_cast<uint32_t>(back[static_cast<size_t>(i)]) == (0x3f00u + i) << 16);
      for (size_t i = static_cast<size_t>(n); i < back.size(); ++i) CHECK(back[i] == 7.0f);
    }
  }
}

TEST_CASE("the active instruction set is the widest one supported, unless MX_VMATH_ISA says") {
  const vm::Isa isa = vm::active_isa();
  CHECK(vm::supported(isa));
  MESSAGE("active: ", std::string(vm::isa_name(isa)));
  if (const char* want = std::getenv("MX_VMATH_ISA")) {
    CHECK(std::string(vm::isa_name(isa)) == want);
  } else {
    const vm::Isa widest = vm::supported(vm::Isa::kAvx512) ? vm::Isa::kAvx512
                           : vm::supported(vm::Isa::kAvx2) ? vm::Isa::kAvx2
                                                           : vm::Isa::kScalar;
    CHECK(isa == widest);
  }
  CHECK_THROWS(vm::kernels(static_cast<vm::Isa>(99)).exp);
}

// The optimizer update functors (optim/update_kernels.h) run the way the
// CUDA kernel runs them, one element index at a time through UpdateAt, with
// arguments built as each optimizer builds them, and compared with the CPU
// optimizer's updates (which test_optim checks against MXNet 1.9.1).
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "compare.h"
#include "ndarray/ndarray.h"
#include "op/host_launch.h"
#include "optim/optimizer.h"
#include "optim/update_kernels.h"

using namespace mx;
using namespace mx::optim;

namespace {

constexpr double kLr = 0.05, kWd = 0.01, kRescale = 0.5;
constexpr int kSteps = 3;
constexpr int64_t kSize = 37;  // not a multiple of any block size

std::vector<double> values(int64_t n, double scale, double shift) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = scale * std::sin(0.7 * i + shift);
  return v;
}

template <typename T>
std::vector<T> cast(const std::vector<double>& v) {
  return std::vector<T>(v.begin(), v.end());
}

// Runs `steps` updates of the optimizer on CPU arrays and the same updates
// through UpdateAt + for_each_element_host; the weights and every state must
// agree. make_args(t) builds the Args of update t (1-based) as the optimizer does.
template <typename T, typename Args>
void check_same_updates(const std::string& name, const std::map<std::string, std::string>& params,
                        const std::function<Args(int64_t t)>& make_args) {
  CAPTURE(name);
  for (const auto& [k, v] : params) CAPTURE(k + "=" + v);
  const DType dtype = sizeof(T) == 8 ? DType::kFloat64 : DType::kFloat32;
  auto optimizer = make_optimizer(name, params);
  const size_t n_states = optimizer->state_names().size();
  NDArray weight = NDArray::from_vector<T>({kSize}, cast<T>(values(kSize, 1.0, 0.3)));
  auto state = optimizer->create_state(0, weight);
  REQUIRE(weight.dtype() == dtype);

  std::vector<T> w = cast<T>(values(kSize, 1.0, 0.3));
  std::vector<std::vector<T>> s(n_states, std::vector<T>(kSize, T(0)));
  for (int64_t t = 1; t <= kSteps; ++t) {
    // Large gradients on some elements so that clipping acts.
    const std::vector<T> g = cast<T>(values(kSize, 3.0 * static_cast<double>(t), 1.1 * t));
    optimizer->update(0, weight, NDArray::from_vector<T>({kSize}, g), state);

    kernels::UpdateArrays<T> arrays;
    arrays.w = w.data();
    arrays.g = g.data();
    for (size_t k = 0; k < n_states; ++k) arrays.s[k] = s[k].data();
    using Step = typename Args::template Step<T>;
    op::for_each_element_host(kSize, kernels::UpdateAt<Step, T>{Step(make_args(t)), arrays});
  }
  auto close = [](const std::vector<T>& got, const NDArray& want) {
    const std::vector<double> a(got.begin(), got.end());
    const auto typed = want.to_vector<T>();
    const std::vector<double> b(typed.begin(), typed.end());
    return test::compare_values(a, b, 1e-6, 1e-7).worst <= 1.0;
  };
  CHECK(close(w, weight));
  for (size_t k = 0; k < n_states; ++k) {
    CAPTURE(optimizer->state_names()[k]);
    CHECK(close(s[k], state[k]));
  }
}

template <typename T>
void check_every_optimizer() {
  const std::string lr = std::to_string(kLr), wd = std::to_string(kWd),
                    rs = std::to_string(kRescale);
  for (const double clip : {-1.0, 0.8}) {
    CAPTURE(clip);
    std::map<std::string, std::string> base{
        {"learning_rate", lr}, {"wd", wd}, {"rescale_grad", rs}};
    if (clip > 0) base["clip_gradient"] = std::to_string(clip);
    auto with = [&](std::map<std::string, std::string> extra) {
      extra.insert(base.begin(), base.end());
      return extra;
    };
    for (const double momentum : {0.0, 0.9}) {
      const bool has_mom = momentum > 0;
      check_same_updates<T, kernels::SGDArgs>(
          "sgd", with({{"momentum", std::to_string(momentum)}}), [&](int64_t) {
            return kernels::SGDArgs{{kLr, kWd, kRescale, clip}, momentum, has_mom};
          });
      if (has_mom)
        check_same_updates<T, kernels::NAGArgs>(
            "nag", with({{"momentum", std::to_string(momentum)}}), [&](int64_t) {
              return kernels::NAGArgs{{kLr, kWd, kRescale, clip}, momentum};
            });
      else
        check_same_updates<T, kernels::NAGPlainArgs>(
            "nag", with({{"momentum", "0"}}), [&](int64_t) {
              return kernels::NAGPlainArgs{{kLr, kWd, kRescale, clip}};
            });
    }
    const double b1 = 0.9, b2 = 0.999, eps = 1e-8;
    check_same_updates<T, kernels::AdamArgs>("adam", with({}), [&](int64_t t) {
      const double td = static_cast<double>(t);
      const double rate = kLr * std::sqrt(1 - std::pow(b2, td)) / (1 - std::pow(b1, td));
      return kernels::AdamArgs{{rate, kWd, kRescale, clip}, b1, b2, eps};
    });
    for (const bool correct : {true, false}) {
      check_same_updates<T, kernels::AdamWArgs>(
          "adamw", with({{"correct_bias", correct ? "True" : "False"}}), [&](int64_t t) {
            const double td = static_cast<double>(t);
            const double alpha =
                correct ? std::sqrt(1 - std::pow(b2, td)) / (1 - std::pow(b1, td)) : 1.0;
            return kernels::AdamWArgs{{kLr, kWd, kRescale, clip}, alpha, b1, b2, eps};
          });
    }
    for (const bool centered : {false, true}) {
      for (const double clip_weights : {-1.0, 0.99}) {
        auto params = with({{"centered", centered ? "True" : "False"}});
        if (clip_weights > 0) params["clip_weights"] = std::to_string(clip_weights);
        check_same_updates<T, kernels::RMSPropArgs>("rmsprop", params, [&](int64_t) {
          return kernels::RMSPropArgs{
              {kLr, kWd, kRescale, clip}, 0.9, 0.9, 1e-8, clip_weights, centered};
        });
      }
    }
    check_same_updates<T, kernels::AdaGradArgs>("adagrad", with({}), [&](int64_t) {
      return kernels::AdaGradArgs{{kLr, kWd, kRescale, clip}, 1e-7};
    });
  }
}

}  // namespace

TEST_CASE("update kernels: every optimizer's functor per element equals its CPU update (float32)") {
  check_every_optimizer<float>();
}

TEST_CASE("update kernels: every optimizer's functor per element equals its CPU update (float64)") {
  check_every_optimizer<double>();
}

TEST_CASE("update kernels: clip bounds both sides and keeps values inside") {
  CHECK(kernels::clip(5.0f, 2.0f) == 2.0f);
  CHECK(kernels::clip(-5.0f, 2.0f) == -2.0f);
  CHECK(kernels::clip(1.5, 2.0) == 1.5);
  CHECK(kernels::square_root(16.0f) == 4.0f);
}

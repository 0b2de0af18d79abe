// LeakyReLU and its relatives, MXNet's act_type values:
//   leaky  x > 0 ? x : slope * x
//   prelu  x > 0 ? x : gamma[c] * x, gamma learned per channel (axis 1) or shared
//   elu    x > 0 ? x : slope * (exp(x) - 1)
//   selu   lambda * (x > 0 ? x : alpha * (exp(x) - 1)), the self-normalizing constants
//   gelu   x * Phi(x) with the exact normal CDF (erf), as MXNet 1.9 computes it
// rrelu (random slopes in training) is rejected with a message.
#include <cmath>
#include <numbers>
#include <type_traits>

#include "base/parallel.h"
#include "op/infer_util.h"
#include "op/kernel_util.h"
#include "op/registry.h"
#include "op/vmath/vmath.h"

namespace mx::op {
namespace {

enum class LeakyType { kRRelu, kLeaky, kPRelu, kElu, kSelu, kGelu };

struct LeakyReLUParam : Params<LeakyReLUParam> {
  LeakyType act_type = LeakyType::kLeaky;
  float slope = 0.25f;
  float lower_bound = 0.125f;
  float upper_bound = 0.334f;

  static void declare(ParamDecl<LeakyReLUParam>& d) {
    d.field("act_type", &LeakyReLUParam::act_type)
        .set_default(LeakyType::kLeaky)
        .add_enum("rrelu", LeakyType::kRRelu)
        .add_enum("leaky", LeakyType::kLeaky)
        .add_enum("prelu", LeakyType::kPRelu)
        .add_enum("elu", LeakyType::kElu)
        .add_enum("selu", LeakyType::kSelu)
        .add_enum("gelu", LeakyType::kGelu)
        .describe("Activation function ('rrelu' is not supported).");
    d.field("slope", &LeakyReLUParam::slope)
        .set_default(0.25f)
        .describe("Slope of the negative part for leaky and elu.");
    d.field("lower_bound", &LeakyReLUParam::lower_bound)
        .set_default(0.125f)
        .describe("Lower bound of the random slope of rrelu.");
    d.field("upper_bound", &LeakyReLUParam::upper_bound)
        .set_default(0.334f)
        .describe("Upper bound of the random slope of rrelu.");
  }

  static LeakyReLUParam from_strings(const AttrMap& attrs, const std::string& owner) {
    LeakyReLUParam p = Params::from_strings(attrs, owner);
    if (p.act_type == LeakyType::kRRelu)
      throw InputError(owner +
                       ": act_type 'rrelu' (random slopes) is not supported; at inference it "
                       "equals act_type 'leaky' with slope (lower_bound + upper_bound) / 2");
    return p;
  }
};

// SELU's constants (Klambauer et al. 2017), as in MXNet.
constexpr double kSeluLambda = 1.0507009873554804934193349852946;
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;

template <typename T>
T activate(LeakyType t, T slope, T x) {
  switch (t) {
    case LeakyType::kLeaky: return x > T(0) ? x : slope * x;
    case LeakyType::kElu: return x > T(0) ? x : slope * std::expm1(x);
    case LeakyType::kSelu:
      return static_cast<T>(kSeluLambda) *
             (x > T(0) ? x : static_cast<T>(kSeluAlpha) * std::expm1(x));
    case LeakyType::kGelu:
      return T(0.5) * x * (T(1) + std::erf(x * static_cast<T>(std::numbers::sqrt2 / 2)));
    default: return x;
  }
}

template <typename T>
T derivative(LeakyType t, T slope, T x) {
  switch (t) {
    case LeakyType::kLeaky: return x > T(0) ? T(1) : slope;
    case LeakyType::kElu: return x > T(0) ? T(1) : slope * std::exp(x);
    case LeakyType::kSelu:
      return static_cast<T>(kSeluLambda) *
             (x > T(0) ? T(1) : static_cast<T>(kSeluAlpha) * std::exp(x));
    case LeakyType::kGelu: {
      const T cdf = T(0.5) * (T(1) + std::erf(x * static_cast<T>(std::numbers::sqrt2 / 2)));
      const T pdf = std::exp(T(-0.5) * x * x) *
                    static_cast<T>(std::numbers::inv_sqrtpi / std::numbers::sqrt2);
      return cdf + x * pdf;
    }
    default: return T(1);
  }
}

std::vector<std::string> input_names(const LeakyReLUParam& p) {
  if (p.act_type == LeakyType::kPRelu) return {"data", "gamma"};
  return {"data"};
}

void infer_leaky_relu(const LeakyReLUParam& p, ShapeVector& in, ShapeVector&, ShapeVector& out) {
  assign_shape(in[0], out[0], "input 'data' (from the output)");
  assign_shape(out[0], in[0], "output");
  if (p.act_type != LeakyType::kPRelu || !in[0].rank_known()) return;
  const Shape& data = in[0];
  if (data.ndim() < 2)
    throw ShapeError("prelu needs input 'data' with a channel axis (at least 2-D), not " +
                     data.to_string());
  Shape& gamma = in[1];
  if (!gamma.rank_known()) {
    gamma = Shape{data[1]};
  } else if (!(gamma.ndim() == 1 && (gamma[0] == 1 || data[1] < 0))) {
    assign_shape(gamma, Shape{data[1]}, "input 'gamma'");
  }
}

// The channel of element i and the size of gamma (1: shared by all).
struct ChannelMap {
  int64_t channels, inner;
  int64_t operator()(int64_t i) const { return channels == 1 ? 0 : (i / inner) % channels; }
};

ChannelMap channel_map(const Shape& data, const Shape& gamma) {
  return {gamma.size() == 1 ? 1 : data[1], data.prod(2, data.ndim())};
}

// float32 elu, selu and gelu in blocks with the vectorised exp, expm1 and
// erf; false for the other types (which map_index computes per element).
// dst may be x or dy itself: each element is read before it is written.
bool vector_forward(LeakyType t, float slope, const float* x, float* y, int64_t n, OpReq req) {
  const vmath::Kernels& k = vmath::active();
  const float lambda = static_cast<float>(kSeluLambda), alpha = static_cast<float>(kSeluAlpha);
  const float inv_sqrt2 = static_cast<float>(std::numbers::sqrt2 / 2);
  switch (t) {
    case LeakyType::kElu:
    case LeakyType::kSelu: {
      const float scale = t == LeakyType::kElu ? 1.0f : lambda;
      const float neg = t == LeakyType::kElu ? slope : lambda * alpha;
      map_blocks(y, n, req, [=, &k](int64_t begin, int64_t len, float* dst) {
        float e[kMapBlock];
        k.expm1(x + begin, e, len);
        for (int64_t i = 0; i < len; ++i) {
          const float v = x[begin + i];
          dst[i] = v > 0.0f ? scale * v : neg * e[i];
        }
      });
      return true;
    }
    case LeakyType::kGelu:
      map_blocks(y, n, req, [=, &k](int64_t begin, int64_t len, float* dst) {
        float e[kMapBlock];
        for (int64_t i = 0; i < len; ++i) e[i] = x[begin + i] * inv_sqrt2;
        k.erf(e, e, len);
        for (int64_t i = 0; i < len; ++i) dst[i] = 0.5f * x[begin + i] * (1.0f + e[i]);
      });
      return true;
    default: return false;
  }
}

bool vector_backward(LeakyType t, float slope, const float* x, const float* dy, float* dx,
                     int64_t n, OpReq req) {
  const vmath::Kernels& k = vmath::active();
  const float lambda = static_cast<float>(kSeluLambda), alpha = static_cast<float>(kSeluAlpha);
  const float inv_sqrt2 = static_cast<float>(std::numbers::sqrt2 / 2);
  const float inv_sqrt_2pi = static_cast<float>(std::numbers::inv_sqrtpi / std::numbers::sqrt2);
  switch (t) {
    case LeakyType::kElu:
    case LeakyType::kSelu: {
      const float scale = t == LeakyType::kElu ? 1.0f : lambda;
      const float neg = t == LeakyType::kElu ? slope : lambda * alpha;
      map_blocks(dx, n, req, [=, &k](int64_t begin, int64_t len, float* dst) {
        float e[kMapBlock];
        k.exp(x + begin, e, len);
        for (int64_t i = 0; i < len; ++i)
          dst[i] = dy[begin + i] * (x[begin + i] > 0.0f ? scale : neg * e[i]);
      });
      return true;
    }
    case LeakyType::kGelu:
      map_blocks(dx, n, req, [=, &k](int64_t begin, int64_t len, float* dst) {
        float cdf[kMapBlock], pdf[kMapBlock];
        for (int64_t i = 0; i < len; ++i) {
          const float v = x[begin + i];
          cdf[i] = v * inv_sqrt2;
          pdf[i] = -0.5f * v * v;
        }
        k.erf(cdf, cdf, len);
        k.exp(pdf, pdf, len);
        for (int64_t i = 0; i < len; ++i) {
          const float v = x[begin + i];
          dst[i] = dy[begin + i] * (0.5f * (1.0f + cdf[i]) + v * pdf[i] * inv_sqrt_2pi);
        }
      });
      return true;
    default: return false;
  }
}

template <typename T>
void leaky_forward(const LeakyReLUParam& p, const ForwardCall& c) {
  const T* x = c.inputs[0].ptr<T>();
  T* y = c.outputs[0].ptr<T>();
  const int64_t n = c.inputs[0].size();
  if (p.act_type == LeakyType::kPRelu) {
    const T* gamma = c.inputs[1].ptr<T>();
    const ChannelMap ch = channel_map(c.inputs[0].shape, c.inputs[1].shape);
    map_index(y, n, c.req[0], [=](int64_t i) { return x[i] > T(0) ? x[i] : gamma[ch(i)] * x[i]; });
    return;
  }
  const LeakyType t = p.act_type;
  const T slope = static_cast<T>(p.slope);
  if constexpr (std::is_same_v<T, float>)
    if (vector_forward(t, slope, x, y, n, c.req[0])) return;
  map_index(y, n, c.req[0], [=](int64_t i) { return activate(t, slope, x[i]); });
}

template <typename T>
void leaky_backward(const LeakyReLUParam& p, const BackwardCall& c) {
  const T* x = c.inputs[0].ptr<T>();
  const T* dy = c.out_grads[0].ptr<T>();
  const int64_t n = c.inputs[0].size();
  // The data gradient may be absent when it is not requested.
  T* dx = c.req[0] == OpReq::kNull ? nullptr : c.in_grads[0].ptr<T>();
  if (p.act_type != LeakyType::kPRelu) {
    const LeakyType t = p.act_type;
    const T slope = static_cast<T>(p.slope);
    if constexpr (std::is_same_v<T, float>)
      if (c.req[0] == OpReq::kNull || vector_backward(t, slope, x, dy, dx, n, c.req[0])) return;
    map_index(dx, n, c.req[0], [=](int64_t i) { return dy[i] * derivative(t, slope, x[i]); });
    return;
  }
  const T* gamma = c.inputs[1].ptr<T>();
  const ChannelMap ch = channel_map(c.inputs[0].shape, c.inputs[1].shape);
  map_index(dx, n, c.req[0], [=](int64_t i) { return x[i] > T(0) ? dy[i] : gamma[ch(i)] * dy[i]; });
  if (c.req[1] == OpReq::kNull) return;
  // dgamma[c] = sum of x * dy over the negative elements of channel c, in a
  // fixed order per channel.
  T* dgamma = c.in_grads[1].ptr<T>();
  const Shape& s = c.inputs[0].shape;
  const int64_t outer = s[0], channels = s[1], inner = ch.inner;
  auto channel_sum = [&](int64_t k) {
    T sum = 0;
    for (int64_t o = 0; o < outer; ++o) {
      const int64_t base = (o * channels + k) * inner;
      for (int64_t i = base; i < base + inner; ++i)
        if (!(x[i] > T(0))) sum += x[i] * dy[i];
    }
    return sum;
  };
  if (ch.channels == 1) {
    T total = 0;
    for (int64_t k = 0; k < channels; ++k) total += channel_sum(k);
    assign(dgamma, c.req[1], total);
    return;
  }
  parallel_for(channels, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, outer * inner)),
               [&](int64_t begin, int64_t end) {
                 for (int64_t k = begin; k < end; ++k) assign(dgamma + k, c.req[1], channel_sum(k));
               });
}

}  // namespace

void register_leaky_relu_ops(OpRegistry& r) {
  r.add<LeakyReLUParam>("LeakyReLU")
      .describe("Leaky, parametric (prelu), elu, selu and gelu rectified activations.")
      .inputs(input_names)
      .infer_shape(infer_leaky_relu)
      .backward_uses(true, false)
      .forward_cpu([](const LeakyReLUParam& p, const ForwardCall& c) {
        dispatch_real(c.inputs[0].dtype, "LeakyReLU",
                      [&](auto tag) { leaky_forward<typename decltype(tag)::type>(p, c); });
      })
      .backward_cpu([](const LeakyReLUParam& p, const BackwardCall& c) {
        dispatch_real(c.inputs[0].dtype, "LeakyReLU",
                      [&](auto tag) { leaky_backward<typename decltype(tag)::type>(p, c); });
      });
}

}  // namespace mx::op

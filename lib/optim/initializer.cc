#include "optim/initializer.h"

#include <cmath>
#include <numbers>
#include <set>
#include <sstream>
#include <type_traits>

#include "base/error.h"
#include "base/parallel.h"
#include "base/strings.h"
#include "engine/engine.h"
#include "ndarray/params_io.h"

namespace mx::optim {

namespace {

// --- values and dtypes ------------------------------------------------------------

template <typename T>
double to_double(T x) {
  if constexpr (is_half_like_v<T>)
    return static_cast<double>(static_cast<float>(x));
  else
    return static_cast<double>(x);
}

template <typename T>
T from_double(double x) {
  if constexpr (is_half_like_v<T>)
    return T(static_cast<float>(x));
  else
    return static_cast<T>(x);
}

// Runs fill(i) -> double for every element of `array` in one engine
// operation (on a host array copied over when `array` lives on a GPU).
template <typename Fill>
void push_fill(const NDArray& array, const std::string& what, Fill fill) {
  NDArray host =
      !array.ctx().is_gpu() ? array : NDArray(array.shape(), Context::cpu(), array.dtype());
  Engine::get().push(
      [host, fill](RunContext) {
        dispatch_dtype(host.dtype(), [&](auto tag) {
          using T = typename decltype(tag)::type;
          T* out = host.data<T>();
          parallel_for(host.size(), int64_t{1} << 14, [&](int64_t begin, int64_t end) {
            for (int64_t i = begin; i < end; ++i) out[i] = from_double<T>(fill(i));
          });
        });
      },
      Context::cpu(), {}, {host.var()}, FnProperty::kNormal, 0, what);
  if (array.ctx().is_gpu()) {
    NDArray target = array;
    host.copy_to(target);
  }
}

// --- the counter-based generator -------------------------------------------------

constexpr uint64_t kGamma = 0x9e3779b97f4a7c15ull;

uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// The stream of one array: FNV-1a of the name, mixed with the seed.
uint64_t stream_key(uint64_t seed, const std::string& name) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ull;
  return mix(mix(seed + kGamma) ^ h);
}

// SplitMix64's i-th output for state `key`: random bits for element i.
uint64_t bits_at(uint64_t key, uint64_t i) { return mix(key + (i + 1) * kGamma); }
// Uniform in [0, 1) with 53 random bits.
double unit_at(uint64_t key, uint64_t i) {
  return static_cast<double>(bits_at(key, i) >> 11) * 0x1.0p-53;
}

void check_finite(const char* owner, const char* param, double value) {
  if (!std::isfinite(value))
    throw InputError(str("initializer '", owner, "': parameter '", param, "' must be finite"));
}

}  // namespace

// --- parameters ----------------------------------------------------------------------

namespace {
template <typename P>
void declare_factor_type(ParamDecl<P>& d, FactorType P::*member) {
  d.field("factor_type", member)
      .set_default(FactorType::kAvg)
      .add_enum("avg", FactorType::kAvg)
      .add_enum("in", FactorType::kIn)
      .add_enum("out", FactorType::kOut)
      .describe("fan used for the scale: mean of fan_in and fan_out, fan_in or fan_out");
}
}  // namespace

void XavierParams::declare(ParamDecl<XavierParams>& d) {
  d.field("rnd_type", &XavierParams::rnd_type)
      .set_default(RandomType::kUniform)
      .add_enum("uniform", RandomType::kUniform)
      .add_enum("gaussian", RandomType::kGaussian)
      .describe("uniform in [-scale, scale] or gaussian with standard deviation scale");
  declare_factor_type(d, &XavierParams::factor_type);
  d.field("magnitude", &XavierParams::magnitude)
      .set_default(3.0)
      .set_lower_bound(0.0)
      .describe("scale = sqrt(magnitude / factor)");
}

void MSRAPreluParams::declare(ParamDecl<MSRAPreluParams>& d) {
  declare_factor_type(d, &MSRAPreluParams::factor_type);
  d.field("slope", &MSRAPreluParams::slope)
      .set_default(0.25)
      .describe("initial negative slope of the PReLU after the layer (0 for ReLU)");
}

void UniformParams::declare(ParamDecl<UniformParams>& d) {
  d.field("scale", &UniformParams::scale)
      .set_default(0.07)
      .set_lower_bound(0.0)
      .describe("values are uniform in [-scale, scale)");
}

void NormalParams::declare(ParamDecl<NormalParams>& d) {
  d.field("sigma", &NormalParams::sigma)
      .set_default(0.01)
      .set_lower_bound(0.0)
      .describe("standard deviation of the zero-mean normal values");
}

void ConstantParams::declare(ParamDecl<ConstantParams>& d) {
  d.field("value", &ConstantParams::value).describe("the value of every element");
}

// --- Initializer -----------------------------------------------------------------------

std::string Initializer::rule_for(const std::string& name) {
  static const std::vector<std::pair<std::string, std::string>> kRules = {
      {"weight", "weight"},
      {"bias", "zero"},
      {"gamma", "one"},
      {"beta", "zero"},
      {"moving_mean", "zero"},
      {"moving_var", "one"},
      {"moving_inv_var", "zero"},
      {"moving_avg", "zero"},
      {"min", "zero"},
      {"max", "one"}};
  for (const auto& [suffix, rule] : kRules)
    if (name.ends_with(suffix)) return rule;
  throw InputError("cannot initialize '" + name +
                   "': default initialization covers names ending in weight (the chosen "
                   "initializer), bias, beta, moving_mean, moving_inv_var, moving_avg, min (0) "
                   "and gamma, moving_var, max (1)");
}

void Initializer::operator()(const std::string& name, const NDArray& array) const {
  const std::string rule = rule_for(name);
  if (array.is_none()) throw Error("cannot initialize '" + name + "': it is a none array");
  if (rule == "weight") {
    init_weight(name, array);
    return;
  }
  NDArray target = array;
  target.fill(rule == "one" ? 1.0 : 0.0);
}

void Initializer::fill_uniform(const std::string& name, const NDArray& array, double low,
                               double high) const {
  const uint64_t key = stream_key(seed_, name);
  push_fill(array, "init " + name, [key, low, high](int64_t i) {
    return low + (high - low) * unit_at(key, static_cast<uint64_t>(i));
  });
}

void Initializer::fill_normal(const std::string& name, const NDArray& array, double mean,
                              double sigma) const {
  const uint64_t key = stream_key(seed_, name);
  // Box-Muller on the pair (2j, 2j + 1): cosine for the even element, sine
  // for the odd one, so each element depends only on its own index.
  push_fill(array, "init " + name, [key, mean, sigma](int64_t i) {
    const uint64_t pair = static_cast<uint64_t>(i) / 2 * 2;
    const double u1 = 1.0 - unit_at(key, pair);  // (0, 1]: log stays finite
    const double u2 = unit_at(key, pair + 1);
    const double r = std::sqrt(-2.0 * std::log(u1));
    const double angle = 2.0 * std::numbers::pi * u2;
    return mean + sigma * r * (i % 2 == 0 ? std::cos(angle) : std::sin(angle));
  });
}

// --- Xavier, MSRAPrelu -------------------------------------------------------------------

Xavier::Xavier(const XavierParams& p, uint64_t seed, std::string name)
    : Initializer(std::move(name), seed), p_(p) {
  check_finite("xavier", "magnitude", p_.magnitude);
}

double Xavier::scale_for(const std::string& name, const Shape& shape) const {
  if (shape.ndim() < 2)
    throw InputError(str("initializer '", this->name(), "' cannot initialize '", name,
                         "' of shape ", shape.to_string(), ": it needs at least 2 dimensions"));
  const double hw = shape.ndim() > 2 ? static_cast<double>(shape.prod(2, shape.ndim())) : 1.0;
  const double fan_in = static_cast<double>(shape[1]) * hw;
  const double fan_out = static_cast<double>(shape[0]) * hw;
  double factor = 1.0;
  switch (p_.factor_type) {
    case FactorType::kAvg: factor = (fan_in + fan_out) / 2.0; break;
    case FactorType::kIn: factor = fan_in; break;
    case FactorType::kOut: factor = fan_out; break;
  }
  if (factor <= 0)
    throw InputError(str("initializer '", this->name(), "' cannot initialize '", name,
                         "' of shape ", shape.to_string(), ": its fan is 0"));
  return std::sqrt(p_.magnitude / factor);
}

void Xavier::init_weight(const std::string& name, const NDArray& array) const {
  const double scale = scale_for(name, array.shape());
  if (p_.rnd_type == RandomType::kUniform)
    fill_uniform(name, array, -scale, scale);
  else
    fill_normal(name, array, 0.0, scale);
}

namespace {
XavierParams msra_as_xavier(const MSRAPreluParams& p) {
  XavierParams x;
  x.rnd_type = RandomType::kGaussian;
  x.factor_type = p.factor_type;
  x.magnitude = 2.0 / (1.0 + p.slope * p.slope);
  return x;
}
}  // namespace

MSRAPrelu::MSRAPrelu(const MSRAPreluParams& p, uint64_t seed)
    : Xavier(msra_as_xavier(p), seed, "msraprelu"), p_(p) {
  check_finite("msraprelu", "slope", p_.slope);
}

// --- Uniform, Normal, Constant -------------------------------------------------------------

Uniform::Uniform(const UniformParams& p, uint64_t seed) : Initializer("uniform", seed), p_(p) {
  check_finite("uniform", "scale", p_.scale);
}
void Uniform::init_weight(const std::string& name, const NDArray& array) const {
  fill_uniform(name, array, -p_.scale, p_.scale);
}

Normal::Normal(const NormalParams& p, uint64_t seed) : Initializer("normal", seed), p_(p) {
  check_finite("normal", "sigma", p_.sigma);
}
void Normal::init_weight(const std::string& name, const NDArray& array) const {
  fill_normal(name, array, 0.0, p_.sigma);
}

Constant::Constant(const ConstantParams& p, std::string name)
    : Initializer(std::move(name), 0), p_(p) {}

std::map<std::string, std::string> Constant::params() const {
  if (name() != "constant") return {};
  return p_.to_strings();
}

void Constant::init_weight(const std::string& /*name*/, const NDArray& array) const {
  NDArray target = array;
  target.fill(p_.value);
}

// --- factory ---------------------------------------------------------------------------------

std::vector<std::string> initializer_names() {
  return {"xavier",   "msraprelu", "msra",  "he",  "uniform", "normal",
          "constant", "zero",      "zeros", "one", "ones"};
}

std::unique_ptr<Initializer> make_initializer(const std::string& name,
                                              const std::map<std::string, std::string>& params,
                                              uint64_t seed) {
  const std::string key = to_lower(name);
  const std::string owner = "initializer '" + key + "'";
  if (key == "xavier")
    return std::make_unique<Xavier>(XavierParams::from_strings(params, owner), seed);
  if (key == "msraprelu" || key == "msra" || key == "he")
    return std::make_unique<MSRAPrelu>(MSRAPreluParams::from_strings(params, owner), seed);
  if (key == "uniform")
    return std::make_unique<Uniform>(UniformParams::from_strings(params, owner), seed);
  if (key == "normal")
    return std::make_unique<Normal>(NormalParams::from_strings(params, owner), seed);
  if (key == "constant")
    return std::make_unique<Constant>(ConstantParams::from_strings(params, owner));
  if (key == "zero" || key == "zeros" || key == "one" || key == "ones") {
    if (!params.empty())
      throw InputError(owner + " takes no parameters; got '" + params.begin()->first + "'");
    ConstantParams p;
    p.value = key.starts_with("one") ? 1.0 : 0.0;
    return std::make_unique<Constant>(p, key.starts_with("one") ? "one" : "zero");
  }
  const auto names = initializer_names();
  throw InputError("unknown initializer '" + name + "'" + did_you_mean(key, names) +
                   "; initializers are: " + join(names, ", "));
}

// --- loading pretrained weights ------------------------------------------------------------------

namespace {

// Copies src into dst (same shape), converting the dtype on the host.
void copy_converting(const NDArray& src, const NDArray& dst) {
  NDArray target = dst;
  if (src.dtype() == dst.dtype()) {
    src.copy_to(target);
    return;
  }
  NDArray host_src = !src.ctx().is_gpu() ? src : src.copy_to(Context::cpu());
  NDArray host_dst = !dst.ctx().is_gpu() ? dst : NDArray(dst.shape(), Context::cpu(), dst.dtype());
  Engine::get().push(
      [host_src, host_dst](RunContext) {
        dispatch_dtype(host_src.dtype(), [&](auto stag) {
          using S = typename decltype(stag)::type;
          dispatch_dtype(host_dst.dtype(), [&](auto dtag) {
            using D = typename decltype(dtag)::type;
            const S* in = host_src.data<S>();
            D* out = host_dst.data<D>();
            for (int64_t i = 0; i < host_src.size(); ++i) out[i] = from_double<D>(to_double(in[i]));
          });
        });
      },
      Context::cpu(), {host_src.var()}, {host_dst.var()}, FnProperty::kNormal, 0,
      "convert pretrained array");
  if (dst.ctx().is_gpu()) host_dst.copy_to(target);
}

std::string strip_prefix(const std::string& name) {
  if (name.starts_with("arg:") || name.starts_with("aux:")) return name.substr(4);
  return name;
}

}  // namespace

PretrainedReport apply_pretrained(const std::vector<std::string>& names,
                                  const std::vector<NDArray>& arrays, const std::string& source,
                                  const std::map<std::string, NDArray>& targets) {
  if (names.size() != arrays.size())
    throw Error(str(source, ": ", names.size(), " names for ", arrays.size(), " arrays"));
  PretrainedReport report;
  std::set<std::string> seen;
  for (size_t i = 0; i < arrays.size(); ++i) {
    const std::string name = strip_prefix(names[i]);
    const NDArray& src = arrays[i];
    if (!seen.insert(name).second)
      throw InputError(source + ": the name '" + name + "' appears more than once");
    auto it = targets.find(name);
    if (it == targets.end()) {
      report.skipped.push_back({name, src.shape(), std::nullopt});
    } else if (src.is_none() || it->second.shape() != src.shape()) {
      report.skipped.push_back({name, src.shape(), it->second.shape()});
    } else {
      copy_converting(src, it->second);
      report.loaded.push_back(name);
    }
  }
  for (const auto& [name, array] : targets) {
    const bool from_file =
        std::find(report.loaded.begin(), report.loaded.end(), name) != report.loaded.end();
    if (!from_file) report.left_initialized.push_back(name);
  }
  return report;
}

PretrainedReport load_pretrained(const std::string& path,
                                 const std::map<std::string, NDArray>& targets) {
  const NamedArrays file = load_params(path);
  if (file.names.empty() && !file.arrays.empty())
    throw InputError(path +
                     ": the arrays have no names, so they cannot be matched to the "
                     "network's parameters");
  return apply_pretrained(file.names, file.arrays, path, targets);
}

std::string PretrainedReport::to_string() const {
  std::ostringstream os;
  os << "pretrained weights: " << loaded.size() << " loaded, " << skipped.size() << " skipped, "
     << left_initialized.size() << " left initialized";
  for (const auto& s : skipped) {
    os << "\n  skipped " << s.name << " " << s.file_shape.to_string();
    if (s.target_shape)
      os << ": the network's shape is " << s.target_shape->to_string();
    else
      os << ": not in the network";
  }
  for (const auto& name : left_initialized) os << "\n  left initialized " << name;
  return os.str();
}

}  // namespace mx::optim

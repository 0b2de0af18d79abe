// Weight initializers with MXNet 1.9.1's names, parameters and name rules
// (python/mxnet/initializer.py), and loading weights from a checkpoint for
// fine-tuning.
//
// Name rules (MXNet's InitDesc dispatch plus the attributes its BatchNorm
// sets on auxiliary states): a name ending in "weight" gets the chosen
// initializer; "bias", "beta", "moving_mean", "moving_inv_var",
// "moving_avg" and "min" get 0; "gamma", "moving_var" and "max" get 1. Any
// other name is an error, as in MXNet.
//
// Random values come from a counter-based generator (SplitMix64 of seed,
// array name and element index), so a seeded run gives the same values on
// every platform, for any number of threads, and an array's values do not
// depend on which other arrays were initialized before it. MXNet's own
// random streams are not reproduced; the distributions are.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/param.h"
#include "base/shape.h"
#include "ndarray/ndarray.h"

namespace mx::optim {

enum class RandomType { kUniform, kGaussian };
enum class FactorType { kAvg, kIn, kOut };

struct XavierParams : Params<XavierParams> {
  RandomType rnd_type = RandomType::kUniform;
  FactorType factor_type = FactorType::kAvg;
  double magnitude = 3.0;
  static void declare(ParamDecl<XavierParams>& d);
};

// MXNet's MSRAPrelu (He et al. 2015): Xavier with gaussian values and
// magnitude 2 / (1 + slope^2).
struct MSRAPreluParams : Params<MSRAPreluParams> {
  FactorType factor_type = FactorType::kAvg;
  double slope = 0.25;
  static void declare(ParamDecl<MSRAPreluParams>& d);
};

struct UniformParams : Params<UniformParams> {
  double scale = 0.07;
  static void declare(ParamDecl<UniformParams>& d);
};

struct NormalParams : Params<NormalParams> {
  double sigma = 0.01;
  static void declare(ParamDecl<NormalParams>& d);
};

struct ConstantParams : Params<ConstantParams> {
  double value = 0.0;
  static void declare(ParamDecl<ConstantParams>& d);
};

class Initializer {
 public:
  virtual ~Initializer() = default;

  // Initializes `array` by the name rules above (pushed to the engine).
  // Throws InputError for a name no rule covers, or a weight the
  // initializer cannot fill (e.g. Xavier on a 1-d array).
  void operator()(const std::string& name, const NDArray& array) const;
  // What operator() does to `name`: "weight" (this initializer), "zero" or
  // "one"; throws InputError like operator() for an unknown pattern.
  static std::string rule_for(const std::string& name);

  // "xavier", "msraprelu", "uniform", "normal", "constant", "zero", "one".
  const std::string& name() const { return name_; }
  virtual std::map<std::string, std::string> params() const = 0;
  uint64_t seed() const { return seed_; }

  // Fills a weight with this initializer's values.
  virtual void init_weight(const std::string& name, const NDArray& array) const = 0;

 protected:
  Initializer(std::string name, uint64_t seed) : name_(std::move(name)), seed_(seed) {}

  // Uniform values in [low, high) / normal values (mean, sigma), from the
  // generator of (seed, name).
  void fill_uniform(const std::string& name, const NDArray& array, double low, double high) const;
  void fill_normal(const std::string& name, const NDArray& array, double mean, double sigma) const;

 private:
  std::string name_;
  uint64_t seed_;
};

class Xavier : public Initializer {
 public:
  Xavier(const XavierParams& p, uint64_t seed, std::string name = "xavier");
  std::map<std::string, std::string> params() const override { return p_.to_strings(); }
  void init_weight(const std::string& name, const NDArray& array) const override;
  // The bound (uniform) or standard deviation (gaussian) for `shape`:
  // sqrt(magnitude / factor), factor = fan_in, fan_out or their mean, where
  // fan_in = shape[1] * prod(shape[2:]) and fan_out = shape[0] * prod(shape[2:]).
  double scale_for(const std::string& name, const Shape& shape) const;

 private:
  XavierParams p_;
};

class MSRAPrelu : public Xavier {
 public:
  MSRAPrelu(const MSRAPreluParams& p, uint64_t seed);
  std::map<std::string, std::string> params() const override { return p_.to_strings(); }

 private:
  MSRAPreluParams p_;
};

class Uniform : public Initializer {
 public:
  Uniform(const UniformParams& p, uint64_t seed);
  std::map<std::string, std::string> params() const override { return p_.to_strings(); }
  void init_weight(const std::string& name, const NDArray& array) const override;

 private:
  UniformParams p_;
};

class Normal : public Initializer {
 public:
  Normal(const NormalParams& p, uint64_t seed);
  std::map<std::string, std::string> params() const override { return p_.to_strings(); }
  void init_weight(const std::string& name, const NDArray& array) const override;

 private:
  NormalParams p_;
};

// Constant, and Zero / One (constants without parameters).
class Constant : public Initializer {
 public:
  Constant(const ConstantParams& p, std::string name = "constant");
  std::map<std::string, std::string> params() const override;
  void init_weight(const std::string& name, const NDArray& array) const override;

 private:
  ConstantParams p_;
};

// The initializer names make_initializer knows (aliases included).
std::vector<std::string> initializer_names();

// Builds an initializer from its name (case-insensitive: xavier, msraprelu
// (also msra, he), uniform, normal, constant, zero/zeros, one/ones) and
// parameters (MXNet's names). Unknown names or parameters and bad values
// throw InputError naming them.
std::unique_ptr<Initializer> make_initializer(const std::string& name,
                                              const std::map<std::string, std::string>& params,
                                              uint64_t seed = 0);

// What load_pretrained did, for a report a user can act on.
struct PretrainedReport {
  struct Skipped {
    std::string name;
    Shape file_shape;
    std::optional<Shape> target_shape;  // set when the network has the name (shape mismatch)
  };
  std::vector<std::string> loaded;            // copied from the file
  std::vector<Skipped> skipped;               // in the file, not used
  std::vector<std::string> left_initialized;  // in the network, not in the file
  // Several lines: counts, then every skipped and left-initialized name.
  std::string to_string() const;
};

// Copies named arrays (names with or without MXNet's "arg:" / "aux:"
// prefixes) into the `targets` of the same name and shape, converting the
// dtype when it differs. Arrays the network does not have, or whose shape
// differs, are skipped; targets the arrays lack keep their values. `source`
// names where the arrays come from in errors (a name given twice). Other
// weight formats (ONNX initializers) read their arrays and come here, so
// every format matches and reports alike.
PretrainedReport apply_pretrained(const std::vector<std::string>& names,
                                  const std::vector<NDArray>& arrays, const std::string& source,
                                  const std::map<std::string, NDArray>& targets);

// apply_pretrained on the arrays of a .params file. Throws InputError for an
// unreadable file or one without names.
PretrainedReport load_pretrained(const std::string& path,
                                 const std::map<std::string, NDArray>& targets);

}  // namespace mx::optim

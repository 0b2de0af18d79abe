// The optimizers and their parameter structs (MXNet 1.9.1's names and
// defaults). Each is implemented in its own file; the formulas are in the
// comments there. Created by name with make_optimizer (optimizer.h).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "optim/optimizer.h"

namespace mx::optim {

struct SGDParams : OptimizerFields, Params<SGDParams> {
  double momentum = 0.0;
  bool lazy_update = true;  // accepted for MXNet configs; dense updates only here
  static void declare(ParamDecl<SGDParams>& d);
};

struct NAGParams : OptimizerFields, Params<NAGParams> {
  double momentum = 0.0;
  static void declare(ParamDecl<NAGParams>& d);
};

struct AdamParams : OptimizerFields, Params<AdamParams> {
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
  bool lazy_update = true;  // as for SGDParams
  static void declare(ParamDecl<AdamParams>& d);
};

struct AdamWParams : OptimizerFields, Params<AdamWParams> {
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
  bool correct_bias = true;
  static void declare(ParamDecl<AdamWParams>& d);
};

struct RMSPropParams : OptimizerFields, Params<RMSPropParams> {
  double gamma1 = 0.9;
  double gamma2 = 0.9;
  double epsilon = 1e-8;
  bool centered = false;
  std::optional<double> clip_weights;
  static void declare(ParamDecl<RMSPropParams>& d);
};

struct AdaGradParams : OptimizerFields, Params<AdaGradParams> {
  double eps = 1e-7;
  static void declare(ParamDecl<AdaGradParams>& d);
};

class SGD : public Optimizer {
 public:
  explicit SGD(const SGDParams& p);
  std::map<std::string, std::string> params() const override { return p_.to_strings(); }
  std::vector<std::string> state_names() const override;

 private:
  void push_update(const NDArray& weight, const NDArray& grad, const std::vector<NDArray>& state,
                   const Step& step) const override;
  SGDParams p_;
};

class NAG : public Optimizer {
 public:
  explicit NAG(const NAGParams& p);
  std::map<std::string, std::string> params() const override { return p_.to_strings(); }
  std::vector<std::string> state_names() const override;

 private:
  void push_update(const NDArray& weight, const NDArray& grad, const std::vector<NDArray>& state,
                   const Step& step) const override;
  NAGParams p_;
};

class Adam : public Optimizer {
 public:
  explicit Adam(const AdamParams& p);
  std::map<std::string, std::string> params() const override { return p_.to_strings(); }
  std::vector<std::string> state_names() const override { return {"mean", "var"}; }

 private:
  void push_update(const NDArray& weight, const NDArray& grad, const std::vector<NDArray>& state,
                   const Step& step) const override;
  AdamParams p_;
};

class AdamW : public Optimizer {
 public:
  explicit AdamW(const AdamWParams& p);
  std::map<std::string, std::string> params() const override { return p_.to_strings(); }
  std::vector<std::string> state_names() const override { return {"mean", "var"}; }

 private:
  void push_update(const NDArray& weight, const NDArray& grad, const std::vector<NDArray>& state,
                   const Step& step) const override;
  AdamWParams p_;
};

class RMSProp : public Optimizer {
 public:
  explicit RMSProp(const RMSPropParams& p);
  std::map<std::string, std::string> params() const override { return p_.to_strings(); }
  std::vector<std::string> state_names() const override;

 private:
  void push_update(const NDArray& weight, const NDArray& grad, const std::vector<NDArray>& state,
                   const Step& step) const override;
  RMSPropParams p_;
};

class AdaGrad : public Optimizer {
 public:
  explicit AdaGrad(const AdaGradParams& p);
  std::map<std::string, std::string> params() const override { return p_.to_strings(); }
  std::vector<std::string> state_names() const override { return {"history"}; }

 private:
  void push_update(const NDArray& weight, const NDArray& grad, const std::vector<NDArray>& state,
                   const Step& step) const override;
  AdaGradParams p_;
};

}  // namespace mx::optim

// Evaluation metrics with MXNet 1.9.1's names and definitions
// (python/mxnet/metric.py): accuracy, top-k accuracy, cross-entropy, MSE,
// MAE, RMSE, and a composite of several.
//
// update(labels, preds) checks the shapes at once (InputError on a
// mismatch) and pushes one engine operation that reads the arrays and adds
// the batch into the metric's accumulator, which has an engine variable of
// its own; get() waits for those operations and returns the value. So
// metrics run alongside the executor like any other NDArray operation.
//
// As in MXNet, a metric's value is sum_metric / num_inst, where
//   accuracy, top-k:  sum = correct predictions, num_inst = samples
//   cross-entropy:    sum = -log(p[label] + eps) over samples, num_inst = samples
//   mse, mae, rmse:   sum = the per-batch mean (RMSE: the per-batch root of
//                     the mean), num_inst = batches (label/pred pairs)
// so MSE/MAE/RMSE average per-batch values, exactly as MXNet 1.9 does
// (for RMSE this is not the root of the overall mean).
//
// Deliberate differences: MSE/MAE/RMSE need label and prediction of the same
// size (MXNet reshaped 1-d arrays to (N, 1) and then silently broadcast
// (N, 1) against (N, K)); top-k with top_k at least the number of classes
// counts every sample as correct (MXNet 1.9.1 raised a numpy error); ties in
// top-k are broken towards the lower class index.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/param.h"
#include "engine/engine.h"
#include "ndarray/ndarray.h"

namespace mx::metric {

struct MetricValue {
  std::string name;
  double value = 0;
};

class Metric {
 public:
  virtual ~Metric() = default;
  Metric(const Metric&) = delete;
  Metric& operator=(const Metric&) = delete;

  // Adds a batch: labels[i] goes with preds[i] (MXNet's update(labels, preds)).
  virtual void update(const std::vector<NDArray>& labels, const std::vector<NDArray>& preds) = 0;
  // Every value (one for a simple metric, one per child for a composite);
  // waits for pending updates and re-throws their failures. NaN before any
  // update, as in MXNet.
  virtual std::vector<MetricValue> get_all() const = 0;
  virtual void reset() = 0;

 protected:
  Metric() = default;
};

// A label or prediction copied to the host as doubles, with its shape.
struct HostArray {
  Shape shape;
  std::vector<double> values;
};

// What one label/prediction pair adds to a metric's accumulator.
struct Contribution {
  double sum = 0;
  int64_t count = 0;
};

// A metric with one value: the sum and count of its accumulator.
class EvalMetric : public Metric {
 public:
  void update(const std::vector<NDArray>& labels, const std::vector<NDArray>& preds) override;
  // (name, sum_metric / num_inst); waits.
  MetricValue get() const;
  std::vector<MetricValue> get_all() const override { return {get()}; }
  void reset() override;

  const std::string& name() const { return name_; }
  // The accumulator (waits): sum_metric and num_inst as MXNet names them.
  double sum_metric() const;
  int64_t num_inst() const;
  // The metric's value from an accumulator's sum and count (those of
  // several workers added up): sum / count, or NaN without samples;
  // perplexity exp(sum / count).
  virtual double value_from(double sum, double count) const;

 protected:
  // One label/prediction pair's contribution to the accumulator. It runs in
  // the engine operation, so it holds copies of what it needs (not the
  // metric, which may be gone by then); an exception there reaches get().
  using BatchFn = std::function<Contribution(const HostArray& label, const HostArray& pred)>;

  EvalMetric(std::string name, BatchFn fn);
  // Throws InputError when the shapes of a pair do not fit this metric.
  virtual void check_pair(const Shape& label, const Shape& pred) const = 0;

 private:
  struct Accumulator {
    double sum = 0;
    int64_t count = 0;
    // The first failed update since the last reset; get() re-throws it, so a
    // later successful update cannot hide it.
    std::exception_ptr error;
  };

  std::string name_;
  BatchFn fn_;
  // Shared with pending operations; touched only by them, or after waiting.
  std::shared_ptr<Accumulator> acc_;
  VarHandle var_;
};

struct AccuracyParams : Params<AccuracyParams> {
  int axis = 1;
  static void declare(ParamDecl<AccuracyParams>& d);
};

// Fraction of samples whose predicted class (the argmax of the prediction
// along `axis`, or the prediction itself when it has the label's shape)
// equals the label; both are truncated to integers, as MXNet does.
class Accuracy : public EvalMetric {
 public:
  explicit Accuracy(const AccuracyParams& p = {});

 private:
  void check_pair(const Shape& label, const Shape& pred) const override;
  AccuracyParams p_;
};

struct TopKAccuracyParams : Params<TopKAccuracyParams> {
  int top_k = 2;
  static void declare(ParamDecl<TopKAccuracyParams>& d);
};

// Fraction of samples whose label is among the top_k classes of a (N, K)
// prediction. Named "top_k_accuracy_K" as in MXNet.
class TopKAccuracy : public EvalMetric {
 public:
  explicit TopKAccuracy(const TopKAccuracyParams& p);

 private:
  void check_pair(const Shape& label, const Shape& pred) const override;
};

struct CrossEntropyParams : Params<CrossEntropyParams> {
  double eps = 1e-12;
  static void declare(ParamDecl<CrossEntropyParams>& d);
};

// Mean over samples of -log(pred[i, label_i] + eps) for (N, K) probabilities.
class CrossEntropy : public EvalMetric {
 public:
  explicit CrossEntropy(const CrossEntropyParams& p = {});

 private:
  void check_pair(const Shape& label, const Shape& pred) const override;
};

struct PerplexityParams : Params<PerplexityParams> {
  std::optional<double> ignore_label;
  int axis = -1;
  static void declare(ParamDecl<PerplexityParams>& d);
};

// MXNet's Perplexity: exp of the mean over labels (those equal to
// ignore_label left out) of -log(max(p[label], 1e-10)); predictions are
// (..., K) probabilities along `axis` (the last), labels one per row of
// them in any shape (language models: (batch, steps) against (batch * steps, K)).
class Perplexity : public EvalMetric {
 public:
  explicit Perplexity(const PerplexityParams& p = {});
  double value_from(double sum, double count) const override;

 private:
  void check_pair(const Shape& label, const Shape& pred) const override;
  PerplexityParams p_;
};

enum class RegressionKind { kMSE, kMAE, kRMSE };

// MSE, MAE and RMSE: the mean (root of the mean for RMSE) of each batch,
// averaged over batches.
class RegressionMetric : public EvalMetric {
 public:
  explicit RegressionMetric(RegressionKind kind);

 private:
  void check_pair(const Shape& label, const Shape& pred) const override;
};

// Several metrics updated with the same batches; values in the order added.
class CompositeMetric : public Metric {
 public:
  CompositeMetric() = default;
  void add(std::unique_ptr<Metric> metric);
  size_t size() const { return metrics_.size(); }
  Metric& at(size_t index) const;

  void update(const std::vector<NDArray>& labels, const std::vector<NDArray>& preds) override;
  std::vector<MetricValue> get_all() const override;
  void reset() override;

 private:
  std::vector<std::unique_ptr<Metric>> metrics_;
};

// The metric names make_metric knows (aliases included).
std::vector<std::string> metric_names();

// Builds a metric by name (case-insensitive): "acc"/"accuracy",
// "top_k_accuracy"/"top_k_acc", "ce"/"cross-entropy"/"crossentropy",
// "perplexity", "mse", "mae", "rmse", with its parameters (MXNet's names:
// axis, top_k, eps, ignore_label).
// Unknown names or parameters and bad values throw InputError naming them.
std::unique_ptr<EvalMetric> make_metric(const std::string& name,
                                        const std::map<std::string, std::string>& params = {});
// A composite of metrics given by name (without parameters).
std::unique_ptr<CompositeMetric> make_composite(const std::vector<std::string>& names);

}  // namespace mx::metric

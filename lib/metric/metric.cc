#include "metric/metric.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "base/error.h"
#include "base/half.h"
#include "base/strings.h"

namespace mx::metric {

namespace {

template <typename T>
double as_double(T x) {
  if constexpr (is_half_like_v<T>)
    return static_cast<double>(static_cast<float>(x));
  else
    return static_cast<double>(x);
}

// MXNet's astype('int32') / numpy.int64 on a label or class value: truncation.
int64_t as_class(double x) {
  if (!std::isfinite(x)) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(std::trunc(x));
}

std::string shapes_text(const Shape& label, const Shape& pred) {
  return "labels of shape " + label.to_string() + " and predictions of shape " + pred.to_string();
}

}  // namespace

// --- EvalMetric --------------------------------------------------------------------

EvalMetric::EvalMetric(std::string name, BatchFn fn)
    : name_(std::move(name)),
      fn_(std::move(fn)),
      acc_(std::make_shared<Accumulator>()),
      var_(Engine::get().new_var()) {}

void EvalMetric::update(const std::vector<NDArray>& labels, const std::vector<NDArray>& preds) {
  if (labels.size() != preds.size())
    throw InputError(str("metric '", name_, "': ", labels.size(), " label arrays but ",
                         preds.size(), " prediction arrays"));
  std::vector<NDArray> host_labels, host_preds;
  std::vector<Var*> reads;
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels[i].is_none() || preds[i].is_none())
      throw InputError(str("metric '", name_, "': label or prediction ", i, " is a none array"));
    try {
      check_pair(labels[i].shape(), preds[i].shape());
    } catch (const InputError& e) {
      throw InputError("metric '" + name_ + "': " + e.what());
    }
    // Metrics run on the CPU; device arrays are copied over first: one copy
    // per array and batch, pushed on the GPU's copy stream, no wait here.
    host_labels.push_back(!labels[i].ctx().is_gpu() ? labels[i]
                                                    : labels[i].copy_to(Context::cpu()));
    host_preds.push_back(!preds[i].ctx().is_gpu() ? preds[i] : preds[i].copy_to(Context::cpu()));
    reads.push_back(host_labels.back().var());
    reads.push_back(host_preds.back().var());
  }
  Engine::get().push(
      [acc = acc_, fn = fn_, name = name_, host_labels, host_preds](RunContext) {
        if (acc->error) return;  // stays failed until reset()
        auto to_host = [](const NDArray& a) {
          HostArray h;
          h.shape = a.shape();
          dispatch_dtype(a.dtype(), [&](auto tag) {
            using T = typename decltype(tag)::type;
            const T* p = a.data<T>();
            h.values.resize(static_cast<size_t>(a.size()));
            for (int64_t i = 0; i < a.size(); ++i) h.values[i] = as_double(p[i]);
          });
          return h;
        };
        try {
          // All pairs first, so a failure leaves the accumulator as it was.
          Contribution total;
          for (size_t i = 0; i < host_labels.size(); ++i) {
            const Contribution c = fn(to_host(host_labels[i]), to_host(host_preds[i]));
            total.sum += c.sum;
            total.count += c.count;
          }
          acc->sum += total.sum;
          acc->count += total.count;
        } catch (const Error& e) {
          acc->error =
              std::make_exception_ptr(Error("metric '" + name + "': " + e.what(), e.kind()));
          std::rethrow_exception(acc->error);
        }
      },
      Context::cpu(), std::move(reads), {var_.get()}, FnProperty::kNormal, 0, "metric " + name_);
}

MetricValue EvalMetric::get() const {
  Engine::get().wait_for_var(var_.get());
  if (acc_->error) std::rethrow_exception(acc_->error);
  return {name_, value_from(acc_->sum, static_cast<double>(acc_->count))};
}

double EvalMetric::value_from(double sum, double count) const {
  return count > 0 ? sum / count : std::numeric_limits<double>::quiet_NaN();
}

double EvalMetric::sum_metric() const {
  get();
  return acc_->sum;
}

int64_t EvalMetric::num_inst() const {
  get();
  return acc_->count;
}

void EvalMetric::reset() {
  Engine::get().push([acc = acc_](RunContext) { *acc = Accumulator{}; }, Context::cpu(), {},
                     {var_.get()}, FnProperty::kNormal, 0, "metric " + name_ + " reset");
}

// --- Accuracy ------------------------------------------------------------------------

void AccuracyParams::declare(ParamDecl<AccuracyParams>& d) {
  d.field("axis", &AccuracyParams::axis)
      .set_default(1)
      .describe("axis of the predictions that holds the classes (negative counts from the end)");
}

namespace {

// The class axis of `pred` for `axis`, or -1 when out of range.
int class_axis(int axis, const Shape& pred) {
  const int a = axis < 0 ? axis + pred.ndim() : axis;
  return a >= 0 && a < pred.ndim() ? a : -1;
}

Contribution accuracy_batch(int axis, const HostArray& label, const HostArray& pred) {
  Contribution c;
  const int64_t n = static_cast<int64_t>(label.values.size());
  c.count = n;
  if (label.shape == pred.shape) {
    for (int64_t i = 0; i < n; ++i)
      c.sum += as_class(pred.values[i]) == as_class(label.values[i]) ? 1 : 0;
    return c;
  }
  const int a = class_axis(axis, pred.shape);
  const int64_t classes = pred.shape[a];
  const int64_t inner = pred.shape.prod(a + 1, pred.shape.ndim());
  // Output element i = (outer o, inner r); its classes are `inner` apart.
  for (int64_t i = 0; i < n; ++i) {
    const int64_t o = i / inner, r = i % inner;
    const double* base = pred.values.data() + o * classes * inner + r;
    int64_t best = 0;
    for (int64_t k = 1; k < classes; ++k)
      if (base[k * inner] > base[best * inner]) best = k;  // first maximum wins, as argmax
    c.sum += best == as_class(label.values[i]) ? 1 : 0;
  }
  return c;
}

}  // namespace

Accuracy::Accuracy(const AccuracyParams& p)
    : EvalMetric("accuracy",
                 [axis = p.axis](const HostArray& label, const HostArray& pred) {
                   return accuracy_batch(axis, label, pred);
                 }),
      p_(p) {}

void Accuracy::check_pair(const Shape& label, const Shape& pred) const {
  if (label == pred) return;  // predictions are class indices
  const int a = class_axis(p_.axis, pred);
  if (a < 0)
    throw InputError(
        str("axis ", p_.axis, " is outside the predictions' shape ", pred.to_string()));
  const int64_t classes = pred[a];
  const int64_t predicted = classes == 0 ? 0 : pred.size() / classes;
  if (classes == 0 || predicted != label.size())
    throw InputError(str(shapes_text(label, pred), " do not match: the argmax over axis ", p_.axis,
                         " gives ", predicted, " classes for ", label.size(), " labels"));
}

// --- TopKAccuracy --------------------------------------------------------------------

void TopKAccuracyParams::declare(ParamDecl<TopKAccuracyParams>& d) {
  d.field("top_k", &TopKAccuracyParams::top_k)
      .set_lower_bound(2)
      .describe(
          "a prediction is correct when the label is among this many best classes "
          "(>= 2; use accuracy for 1)");
}

namespace {
Contribution top_k_batch(int top_k, const HostArray& label, const HostArray& pred) {
  const int64_t n = pred.shape[0], classes = pred.shape[1];
  const int64_t k = std::min<int64_t>(top_k, classes);
  Contribution c;
  c.count = n;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t cls = as_class(label.values[i]);
    if (cls < 0 || cls >= classes) continue;  // never among the predicted classes
    const double* row = pred.values.data() + i * classes;
    const double score = row[cls];
    // The label's rank when ties go to the lower class index.
    int64_t rank = 0;
    for (int64_t j = 0; j < classes; ++j)
      if (row[j] > score || (row[j] == score && j < cls)) ++rank;
    if (rank < k) c.sum += 1;
  }
  return c;
}
}  // namespace

TopKAccuracy::TopKAccuracy(const TopKAccuracyParams& p)
    : EvalMetric("top_k_accuracy_" + std::to_string(p.top_k),
                 [top_k = p.top_k](const HostArray& label, const HostArray& pred) {
                   return top_k_batch(top_k, label, pred);
                 }) {
  if (p.top_k < 2)
    throw InputError(str("metric 'top_k_accuracy': top_k is ", p.top_k,
                         "; it must be >= 2 (use 'accuracy' for 1)"));
}

void TopKAccuracy::check_pair(const Shape& label, const Shape& pred) const {
  if (pred.ndim() != 2)
    throw InputError("predictions must be (batch, classes); got shape " + pred.to_string());
  if (label.size() != pred[0])
    throw InputError(str(shapes_text(label, pred), " do not match: ", label.size(), " labels for ",
                         pred[0], " samples"));
}

// --- CrossEntropy --------------------------------------------------------------------

void CrossEntropyParams::declare(ParamDecl<CrossEntropyParams>& d) {
  d.field("eps", &CrossEntropyParams::eps)
      .set_default(1e-12)
      .set_lower_bound(0.0)
      .describe("added to the probability before the log, so that p = 0 stays finite");
}

namespace {
Contribution cross_entropy_batch(double eps, const HostArray& label, const HostArray& pred) {
  const int64_t n = pred.shape[0], classes = pred.shape[1];
  Contribution c;
  c.count = n;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t cls = as_class(label.values[i]);
    if (cls < 0 || cls >= classes)
      throw InputError(str("label ", label.values[i], " of sample ", i, " is not a class in [0, ",
                           classes, ")"));
    c.sum += -std::log(pred.values[i * classes + cls] + eps);
  }
  return c;
}
}  // namespace

CrossEntropy::CrossEntropy(const CrossEntropyParams& p)
    : EvalMetric("cross-entropy", [eps = p.eps](const HostArray& label, const HostArray& pred) {
        return cross_entropy_batch(eps, label, pred);
      }) {}

void CrossEntropy::check_pair(const Shape& label, const Shape& pred) const {
  if (pred.ndim() != 2)
    throw InputError("predictions must be (batch, classes) probabilities; got shape " +
                     pred.to_string());
  if (label.size() != pred[0])
    throw InputError(str(shapes_text(label, pred), " do not match: ", label.size(), " labels for ",
                         pred[0], " samples"));
}

// --- Perplexity ------------------------------------------------------------------------

void PerplexityParams::declare(ParamDecl<PerplexityParams>& d) {
  d.field("ignore_label", &PerplexityParams::ignore_label)
      .set_default(std::nullopt)
      .describe("labels with this value (padding) are left out; None: none");
  d.field("axis", &PerplexityParams::axis)
      .set_default(-1)
      .describe("the classes' axis of the predictions (only the last is supported)");
}

namespace {
Contribution perplexity_batch(std::optional<double> ignore, const HostArray& label,
                              const HostArray& pred) {
  const int64_t classes = pred.shape[pred.shape.ndim() - 1];
  Contribution c;
  for (size_t i = 0; i < label.values.size(); ++i) {
    if (ignore && label.values[i] == *ignore) continue;
    const int64_t cls = as_class(label.values[i]);
    if (cls < 0 || cls >= classes)
      throw InputError(
          str("label ", label.values[i], " at ", i, " is not a class in [0, ", classes, ")"));
    const double p = pred.values[i * static_cast<size_t>(classes) + static_cast<size_t>(cls)];
    c.sum -= std::log(std::max(p, 1e-10));
    ++c.count;
  }
  return c;
}
}  // namespace

Perplexity::Perplexity(const PerplexityParams& p)
    : EvalMetric("perplexity",
                 [ignore = p.ignore_label](const HostArray& label, const HostArray& pred) {
                   return perplexity_batch(ignore, label, pred);
                 }),
      p_(p) {}

double Perplexity::value_from(double sum, double count) const {
  return count > 0 ? std::exp(sum / count) : std::numeric_limits<double>::quiet_NaN();
}

void Perplexity::check_pair(const Shape& label, const Shape& pred) const {
  if (p_.axis != -1 && p_.axis != pred.ndim() - 1)
    throw InputError(
        str("perplexity takes the classes on the last axis (axis -1), not axis ", p_.axis));
  if (pred.ndim() < 2)
    throw InputError("predictions must be (..., classes) probabilities; got shape " +
                     pred.to_string());
  const int64_t rows = pred.size() / std::max<int64_t>(pred[pred.ndim() - 1], 1);
  if (label.size() != rows)
    throw InputError(str(shapes_text(label, pred), " do not match: ", label.size(), " labels for ",
                         rows, " rows of predictions"));
}

// --- MSE, MAE, RMSE ------------------------------------------------------------------

namespace {
const char* regression_name(RegressionKind kind) {
  switch (kind) {
    case RegressionKind::kMSE: return "mse";
    case RegressionKind::kMAE: return "mae";
    case RegressionKind::kRMSE: return "rmse";
  }
  return "mse";
}
// MXNet reshapes a 1-d array (N,) to (N, 1) before comparing.
Shape as_column(const Shape& s) { return s.ndim() == 1 ? Shape{s[0], 1} : s; }
Contribution regression_batch(RegressionKind kind, const HostArray& label, const HostArray& pred) {
  double sum = 0;
  const size_t n = label.values.size();
  for (size_t i = 0; i < n; ++i) {
    const double d = label.values[i] - pred.values[i];
    sum += kind == RegressionKind::kMAE ? std::abs(d) : d * d;
  }
  double mean = sum / static_cast<double>(n);
  if (kind == RegressionKind::kRMSE) mean = std::sqrt(mean);
  return {mean, 1};
}
}  // namespace

RegressionMetric::RegressionMetric(RegressionKind kind)
    : EvalMetric(regression_name(kind), [kind](const HostArray& label, const HostArray& pred) {
        return regression_batch(kind, label, pred);
      }) {}

void RegressionMetric::check_pair(const Shape& label, const Shape& pred) const {
  if (as_column(label) != as_column(pred))
    throw InputError(shapes_text(label, pred) +
                     " differ; they must have one shape ((N,) and (N, 1) count as one)");
  if (label.size() == 0) throw InputError("labels of shape " + label.to_string() + " are empty");
}

// --- CompositeMetric -----------------------------------------------------------------

void CompositeMetric::add(std::unique_ptr<Metric> metric) {
  MX_CHECK(metric != nullptr, "CompositeMetric::add of a null metric");
  metrics_.push_back(std::move(metric));
}

Metric& CompositeMetric::at(size_t index) const {
  if (index >= metrics_.size())
    throw Error(str("metric index ", index, " is outside [0, ", metrics_.size(), ")"));
  return *metrics_[index];
}

void CompositeMetric::update(const std::vector<NDArray>& labels,
                             const std::vector<NDArray>& preds) {
  // GPU arrays are copied to the host once (on the copy stream) for all the
  // metrics, not once per metric.
  auto on_host = [](const std::vector<NDArray>& arrays) {
    std::vector<NDArray> host;
    for (const auto& a : arrays)
      host.push_back(!a.is_none() && a.ctx().is_gpu() ? a.copy_to(Context::cpu()) : a);
    return host;
  };
  if (metrics_.size() < 2) {
    for (auto& m : metrics_) m->update(labels, preds);
    return;
  }
  const std::vector<NDArray> host_labels = on_host(labels), host_preds = on_host(preds);
  for (auto& m : metrics_) m->update(host_labels, host_preds);
}

std::vector<MetricValue> CompositeMetric::get_all() const {
  std::vector<MetricValue> out;
  for (const auto& m : metrics_) {
    auto values = m->get_all();
    out.insert(out.end(), values.begin(), values.end());
  }
  return out;
}

void CompositeMetric::reset() {
  for (auto& m : metrics_) m->reset();
}

// --- factory -----------------------------------------------------------------------------

std::vector<std::string> metric_names() {
  return {"acc",           "accuracy",     "top_k_accuracy", "top_k_acc", "ce",
          "cross-entropy", "crossentropy", "perplexity",     "mse",       "mae",
          "rmse"};
}

std::unique_ptr<EvalMetric> make_metric(const std::string& name,
                                        const std::map<std::string, std::string>& params) {
  const std::string key = to_lower(name);
  const std::string owner = "metric '" + key + "'";
  if (key == "acc" || key == "accuracy")
    return std::make_unique<Accuracy>(AccuracyParams::from_strings(params, owner));
  if (key == "top_k_accuracy" || key == "top_k_acc")
    return std::make_unique<TopKAccuracy>(TopKAccuracyParams::from_strings(params, owner));
  if (key == "ce" || key == "cross-entropy" || key == "crossentropy")
    return std::make_unique<CrossEntropy>(CrossEntropyParams::from_strings(params, owner));
  if (key == "perplexity")
    return std::make_unique<Perplexity>(PerplexityParams::from_strings(params, owner));
  RegressionKind kind;
  if (key == "mse")
    kind = RegressionKind::kMSE;
  else if (key == "mae")
    kind = RegressionKind::kMAE;
  else if (key == "rmse")
    kind = RegressionKind::kRMSE;
  else {
    const auto names = metric_names();
    throw InputError("unknown metric '" + name + "'" + did_you_mean(key, names) +
                     "; metrics are: " + join(names, ", "));
  }
  if (!params.empty())
    throw InputError(owner + " takes no parameters; got '" + params.begin()->first + "'");
  return std::make_unique<RegressionMetric>(kind);
}

std::unique_ptr<CompositeMetric> make_composite(const std::vector<std::string>& names) {
  auto composite = std::make_unique<CompositeMetric>();
  for (const auto& n : names) composite->add(make_metric(n));
  return composite;
}

}  // namespace mx::metric

#include "train/predict_inputs.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <numeric>
#include <tuple>

#include "base/error.h"
#include "base/strings.h"
#include "io/image_augmenter.h"
#include "io/image_record_iter.h"
#include "io/mnist_iter.h"
#include "op/invoke.h"
#include "train/config.h"
#include "train/predict_progress.h"

namespace mx::train {
namespace {

std::vector<std::pair<int, float>> top_k(const float* p, int64_t n, int k) {
  std::vector<int> idx(static_cast<size_t>(n));
  std::iota(idx.begin(), idx.end(), 0);
  k = static_cast<int>(std::min<int64_t>(k, n));
  std::partial_sort(idx.begin(), idx.begin() + k, idx.end(),
                    [&](int a, int b) { return p[a] > p[b]; });
  std::vector<std::pair<int, float>> out;
  for (int i = 0; i < k; ++i)
    out.emplace_back(idx[static_cast<size_t>(i)], p[idx[static_cast<size_t>(i)]]);
  return out;
}

bool is_rec(const std::string& path) {
  return path.size() > 4 && path.compare(path.size() - 4, 4, ".rec") == 0;
}

bool is_idx(const std::string& path) {
  return path.find("-idx") != std::string::npos || path.find(".idx3") != std::string::npos;
}

// The examples of a data iterator, named SOURCE#N, without its padding.
InputBatches iterator_batches(std::shared_ptr<DataIter> iter, const std::string& source) {
  InputBatches batches;
  batches.source = source;
  batches.count = iter->batches_per_epoch();
  auto seen = std::make_shared<uint64_t>(0);
  batches.next = [iter, seen, source]() -> std::optional<InputBatch> {
    auto b = iter->next();
    if (!b) return std::nullopt;
    const int real = static_cast<int>(b->data.shape()[0]) - b->pad;
    InputBatch out;
    auto l = b->label.to_vector<float>();
    const int64_t width = b->label.size() / b->label.shape()[0];
    for (int i = 0; i < real; ++i) {
      out.labels.push_back(static_cast<int>(l[static_cast<size_t>(i * width)]));
      out.names.push_back(source + "#" + std::to_string((*seen)++));
    }
    out.data = b->data;
    return out;
  };
  return batches;
}

InputBatches rec_batches(const PredictInputs& in, const Preprocess& pre) {
  const std::string& path = in.paths[0];
  if (!pre.example.is_known()) throw InputError("a .rec input needs --data-shape C,H,W");
  std::map<std::string, std::string> p{{"path_imgrec", path},
                                       {"data_shape", pre.example.to_string()},
                                       {"batch_size", std::to_string(in.batch_size)},
                                       {"resize", std::to_string(pre.resize)},
                                       {"mean_r", std::to_string(pre.mean[0])},
                                       {"mean_g", std::to_string(pre.mean[1])},
                                       {"mean_b", std::to_string(pre.mean[2])},
                                       {"std_r", std::to_string(pre.std[0])},
                                       {"std_g", std::to_string(pre.std[1])},
                                       {"std_b", std::to_string(pre.std[2])},
                                       {"scale", std::to_string(pre.scale)}};
  return iterator_batches(
      std::make_shared<ImageRecordIter>(ImageRecordIterParam::from_strings(p, "mx-predict")), path);
}

InputBatches idx_batches(const PredictInputs& in) {
  const std::string& path = in.paths[0];
  if (in.labels.empty())
    throw InputError("an IDX images file needs --labels (the IDX labels file)");
  return iterator_batches(std::make_shared<MNISTIter>(MNISTIterParam::from_strings(
                              {{"image", path},
                               {"label", in.labels},
                               {"batch_size", std::to_string(in.batch_size)},
                               {"shuffle", "False"},
                               {"silent", "True"}},
                              "mx-predict")),
                          path);
}

// Image files, decoded and center-cropped to the example shape.
InputBatches image_batches(const PredictInputs& in, const Preprocess& pre) {
  const Shape& example = pre.example;
  if (example.ndim() != 3)
    throw InputError(
        "image files need --data-shape C,H,W (e.g. 3,224,224), or a run directory whose config has "
        "one");
  ImageAugmentConfig cfg;
  cfg.channels = static_cast<int>(example[0]);
  cfg.height = static_cast<int>(example[1]);
  cfg.width = static_cast<int>(example[2]);
  cfg.resize = pre.resize;
  for (int c = 0; c < 3; ++c) {
    cfg.mean[c] = pre.mean[static_cast<size_t>(c)];
    cfg.std[c] = pre.std[static_cast<size_t>(c)];
  }
  cfg.scale = pre.scale;
  auto augmenter = std::make_shared<ImageAugmenter>(cfg);
  auto rng = std::make_shared<Rng>(0);
  auto next_input = std::make_shared<size_t>(0);
  const size_t batch = static_cast<size_t>(in.batch_size);
  InputBatches batches;
  batches.source = "images";
  batches.count = static_cast<int64_t>((in.paths.size() + batch - 1) / batch);
  batches.next = [=, paths = in.paths]() -> std::optional<InputBatch> {
    if (*next_input >= paths.size()) return std::nullopt;
    const size_t n = std::min(batch, paths.size() - *next_input);
    const size_t example_size = static_cast<size_t>(example.size());
    std::vector<float> values(n * example_size);
    InputBatch out;
    for (size_t i = 0; i < n; ++i) {
      const std::string& path = paths[*next_input + i];
      std::ifstream file(path, std::ios::binary);
      if (!file) throw InputError("cannot open image '" + path + "'");
      std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
      if (!augmenter->decode_into(bytes, *rng, values.data() + i * example_size))
        throw InputError("'" + path + "' is not an image OpenCV can decode");
      out.names.push_back(path);
    }
    *next_input += n;
    std::vector<int64_t> dims{static_cast<int64_t>(n)};
    dims.insert(dims.end(), example.begin(), example.end());
    out.data = NDArray::from_vector<float>(Shape(dims), std::move(values));
    return out;
  };
  return batches;
}

}  // namespace

std::string OutputReading::key() const { return kind == Kind::raw ? "score" : "probability"; }

std::string OutputReading::note() const {
  const std::string layer = last_op + " '" + last_name + "'";
  switch (kind) {
    case Kind::probability: return "";
    case Kind::softmax_applied:
      return "the network ends in " + layer +
             " without a softmax; probabilities are the softmax of its outputs (--raw: the "
             "outputs)";
    case Kind::exp_applied:
      return "the network ends in " + layer + "; probabilities are the exp of its outputs";
    case Kind::raw: return "scores are the raw outputs of " + layer;
  }
  return "";
}

void OutputReading::apply(float* values, int64_t n) const {
  if (n <= 0) return;
  if (kind == Kind::exp_applied) {
    for (int64_t i = 0; i < n; ++i) values[i] = std::exp(values[i]);
  } else if (kind == Kind::softmax_applied) {
    const float top = *std::max_element(values, values + n);
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += values[i] = std::exp(values[i] - top);
    for (int64_t i = 0; i < n; ++i) values[i] = static_cast<float>(values[i] / sum);
  }
}

OutputReading read_output(const graph::Symbol& symbol, bool raw) {
  OutputReading r;
  if (symbol.outputs().empty()) return r;
  const graph::Node& last = *symbol.outputs().front().node;
  r.last_name = last.name;
  r.last_op = last.is_variable() ? "a variable" : last.op->def().name;
  if (raw) {
    r.kind = OutputReading::Kind::raw;
  } else if (r.last_op == "SoftmaxOutput" || r.last_op == "softmax") {
    r.kind = OutputReading::Kind::probability;
  } else if (r.last_op == "log_softmax") {
    r.kind = OutputReading::Kind::exp_applied;
  } else {
    r.kind = OutputReading::Kind::softmax_applied;
  }
  return r;
}

Preprocess resolve_preprocess(const PreprocessOptions& given, const Predictor& predictor) {
  Preprocess p;
  p.resize = given.resize;
  if (given.mean) p.mean = *given.mean;
  if (given.std) p.std = *given.std;
  if (given.scale) p.scale = *given.scale;
  if (!given.data_shape.empty()) p.example = Shape::parse(given.data_shape);
  if (!p.example.rank_known()) p.example = predictor.stated_example_shape();
  const auto run_config = predictor.run_config();
  if (!run_config) return p;
  // The run's training data settings are the defaults for preprocessing.
  auto data = Config::load(*run_config).section("data.train");
  const bool mnist = to_lower(data["type"]) == "mnist";
  if (!p.example.rank_known() && data.count("data_shape"))
    p.example = Shape::parse(data["data_shape"]);
  if (!p.example.rank_known() && mnist) p.example = Shape{1, 28, 28};
  if (!given.scale) {
    if (data.count("scale")) p.scale = std::stof(data["scale"]);
    if (mnist) p.scale = 1.0f / 256;  // MNISTIter's scaling
  }
  const char* keys[2][3] = {{"mean_r", "mean_g", "mean_b"}, {"std_r", "std_g", "std_b"}};
  for (size_t c = 0; c < 3; ++c) {
    if (!given.mean && data.count(keys[0][c])) p.mean[c] = std::stof(data[keys[0][c]]);
    if (!given.std && data.count(keys[1][c])) p.std[c] = std::stof(data[keys[1][c]]);
  }
  return p;
}

std::optional<std::array<float, 3>> parse_rgb(const std::string& text, const char* option) {
  if (text.empty()) return std::nullopt;
  auto parts = split(text, ',');
  std::array<float, 3> values{};
  try {
    if (parts.size() != 3) throw std::invalid_argument("count");
    for (size_t i = 0; i < 3; ++i) {
      size_t used = 0;
      values[i] = std::stof(parts[i], &used);
      if (used != parts[i].size()) throw std::invalid_argument("trailing");
    }
  } catch (const std::exception&) {
    throw InputError(std::string(option) + " needs three comma-separated numbers r,g,b, not '" +
                     text + "'");
  }
  return values;
}

InputBatches read_input_batches(const PredictInputs& inputs, const Preprocess& preprocess) {
  if (inputs.paths.empty())
    throw InputError("give inputs: image files, a .rec file or an IDX images file");
  if (inputs.paths.size() == 1 && is_rec(inputs.paths[0])) return rec_batches(inputs, preprocess);
  if (inputs.paths.size() == 1 && is_idx(inputs.paths[0])) return idx_batches(inputs);
  return image_batches(inputs, preprocess);
}

std::vector<Prediction> predict_inputs(Predictor& predictor, const PredictInputs& inputs,
                                       const Preprocess& preprocess, const OutputReading& reading) {
  InputBatches batches = read_input_batches(inputs, preprocess);
  PredictProgress progress(batches.source, batches.count);
  std::vector<Prediction> rows;
  while (auto batch = batches.next()) {
    NDArray probs = predictor.predict(batch->data);
    // A quantized output (an ONNX model's uint8 or int8) is read as its integers.
    if (probs.dtype() != DType::kFloat32)
      probs = op::invoke("Cast", {probs}, {{"dtype", "float32"}})[0];
    auto values = probs.to_vector<float>();
    const int64_t classes = probs.size() / probs.shape()[0];
    for (size_t i = 0; i < batch->names.size(); ++i) {
      float* row = values.data() + static_cast<int64_t>(i) * classes;
      reading.apply(row, classes);
      Prediction r;
      r.input = batch->names[i];
      r.top = top_k(row, classes, inputs.top_k);
      if (i < batch->labels.size()) r.label = batch->labels[i];
      rows.push_back(r);
    }
    progress.batch_done(static_cast<int64_t>(batch->names.size()));
  }
  return rows;
}

}  // namespace mx::train

// mx-predict: predicts with a checkpoint (mx's run directory, or an MXNet
// 1.x PREFIX-symbol.json + PREFIX-NNNN.params) on image files, a .rec file
// or IDX files; top-k classes with probabilities, accuracy when the inputs
// carry labels, latency and throughput with --benchmark.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "base/strings.h"
#include "io/image_augmenter.h"
#include "io/image_record_iter.h"
#include "io/mnist_iter.h"
#include "program.h"
#include "train/config.h"
#include "train/predictor.h"

namespace fs = std::filesystem;
using namespace mx;

namespace {

struct Options {
  std::string model;
  std::optional<int> epoch;
  std::vector<std::string> inputs;
  std::string labels, classes_file, device = "cpu";
  std::string data_shape;  // per example, e.g. (3, 224, 224)
  int batch_size = 32, top_k = 5, benchmark = 0;
  bool json = false;
  float mean[3] = {0, 0, 0}, std[3] = {1, 1, 1};
  float scale = 1;
  int resize = -1;
};

struct Row {
  std::string input;
  std::vector<std::pair<int, float>> top;
  std::optional<int> label;
};

std::vector<std::string> read_classes(const std::string& path) {
  if (path.empty()) return {};
  std::ifstream in(path);
  if (!in) throw InputError("cannot open class-name file '" + path + "'");
  std::vector<std::string> names;
  for (std::string line; std::getline(in, line);) names.push_back(trim(line));
  return names;
}

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

bool is_idx(const std::string& path) {
  return path.find("-idx") != std::string::npos || path.find(".idx3") != std::string::npos;
}

// Runs `predictor` over the batches `next` gives (data, labels or empty, names).
template <typename Next>
std::vector<Row> run_batches(train::Predictor& predictor, const Options& o, Next next) {
  std::vector<Row> rows;
  while (auto batch = next()) {
    auto& [data, labels, names] = *batch;
    NDArray probs = predictor.predict(data);
    auto values = probs.to_vector<float>();
    const int64_t classes = probs.size() / probs.shape()[0];
    for (size_t i = 0; i < names.size(); ++i) {
      Row r;
      r.input = names[i];
      r.top = top_k(values.data() + static_cast<int64_t>(i) * classes, classes, o.top_k);
      if (i < labels.size()) r.label = labels[i];
      rows.push_back(r);
    }
  }
  return rows;
}

using Batch = std::tuple<NDArray, std::vector<int>, std::vector<std::string>>;

std::vector<Row> predict_iter(train::Predictor& predictor, const Options& o, DataIter& iter,
                              const std::string& source) {
  uint64_t seen = 0;
  return run_batches(predictor, o, [&]() -> std::optional<Batch> {
    auto b = iter.next();
    if (!b) return std::nullopt;
    const int real = static_cast<int>(b->data.shape()[0]) - b->pad;
    std::vector<int> labels;
    auto l = b->label.to_vector<float>();
    const int64_t width = b->label.size() / b->label.shape()[0];
    std::vector<std::string> names;
    for (int i = 0; i < real; ++i) {
      labels.push_back(static_cast<int>(l[static_cast<size_t>(i * width)]));
      names.push_back(source + "#" + std::to_string(seen++));
    }
    return Batch{b->data, labels, names};
  });
}

std::vector<Row> predict_images(train::Predictor& predictor, const Options& o,
                                const Shape& example) {
  if (example.ndim() != 3)
    throw InputError(
        "image files need --data-shape C,H,W (e.g. 3,224,224), or a run directory whose config has "
        "one");
  ImageAugmentConfig cfg;
  cfg.channels = static_cast<int>(example[0]);
  cfg.height = static_cast<int>(example[1]);
  cfg.width = static_cast<int>(example[2]);
  cfg.resize = o.resize;
  for (int c = 0; c < 3; ++c) {
    cfg.mean[c] = o.mean[c];
    cfg.std[c] = o.std[c];
  }
  cfg.scale = o.scale;
  ImageAugmenter augmenter(cfg);
  Rng rng(0);
  size_t next_input = 0;
  return run_batches(predictor, o, [&]() -> std::optional<Batch> {
    if (next_input >= o.inputs.size()) return std::nullopt;
    const size_t n =
        std::min<size_t>(static_cast<size_t>(o.batch_size), o.inputs.size() - next_input);
    std::vector<float> values(n * static_cast<size_t>(example.size()));
    std::vector<std::string> names;
    for (size_t i = 0; i < n; ++i) {
      const std::string& path = o.inputs[next_input + i];
      std::ifstream in(path, std::ios::binary);
      if (!in) throw InputError("cannot open image '" + path + "'");
      std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (!augmenter.decode_into(bytes, rng,
                                 values.data() + i * static_cast<size_t>(example.size())))
        throw InputError("'" + path + "' is not an image OpenCV can decode");
      names.push_back(path);
    }
    next_input += n;
    std::vector<int64_t> dims{static_cast<int64_t>(n)};
    dims.insert(dims.end(), example.begin(), example.end());
    return Batch{NDArray::from_vector<float>(Shape(dims), std::move(values)), {}, names};
  });
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Predict with a checkpoint (mx's or MXNet 1.x's) on images, a .rec file or IDX files",
      "mx-predict"};
  Options o;
  std::string mean_text, std_text;
  int epoch = -1;
  app.add_option("--model,-m", o.model, "run directory, PREFIX-NNNN, or PREFIX with --epoch")
      ->required();
  app.add_option("--epoch", epoch, "checkpoint epoch (with a PREFIX)");
  app.add_option("inputs", o.inputs,
                 "image files, one .rec file, or an IDX images file (labels: --labels)");
  app.add_option("--labels", o.labels, "IDX labels file for an IDX images file");
  app.add_option("--batch-size", o.batch_size, "examples per batch")->check(CLI::PositiveNumber);
  app.add_option("--top-k", o.top_k, "classes to show per input")->check(CLI::PositiveNumber);
  app.add_option("--classes", o.classes_file, "class names, one per line (line k = class k)");
  app.add_option("--data-shape", o.data_shape,
                 "one example's shape for images and .rec, e.g. 3,224,224");
  app.add_option("--mean", mean_text, "per-channel mean r,g,b subtracted from images");
  app.add_option("--std", std_text, "per-channel std r,g,b images are divided by");
  app.add_option("--scale", o.scale, "pixel scale applied after mean/std");
  app.add_option("--resize", o.resize, "shorter side before the center crop");
  app.add_option("--device", o.device, "cpu or gpu:N");
  app.add_flag("--json", o.json, "print JSON");
  app.add_option("--benchmark", o.benchmark,
                 "latency at batch 1 and throughput at --batch-size over N runs")
      ->expected(0, 1)
      ->default_str("20");

  return run_program(app, argc, argv, [&] {
    if (epoch >= 0) o.epoch = epoch;
    auto floats = [](const std::string& text, float* out, const char* what) {
      if (text.empty()) return;
      auto parts = split(text, ',');
      if (parts.size() != 3)
        throw InputError(std::string(what) + " needs three comma-separated values r,g,b");
      for (int i = 0; i < 3; ++i) out[i] = std::stof(parts[static_cast<size_t>(i)]);
    };
    floats(mean_text, o.mean, "--mean");
    floats(std_text, o.std, "--std");
    if (app.count("--benchmark") && o.benchmark <= 0) o.benchmark = 20;
    train::Predictor predictor(o.model, o.epoch, Context::parse(o.device));

    // One example's shape: given, or the training run's data shape.
    Shape example;
    if (!o.data_shape.empty()) example = Shape::parse(o.data_shape);
    if (auto cfg = predictor.run_config()) {
      // The run's training data settings are the defaults for preprocessing.
      auto data = train::Config::load(*cfg).section("data.train");
      if (!example.rank_known() && data.count("data_shape"))
        example = Shape::parse(data["data_shape"]);
      if (!example.rank_known() && to_lower(data["type"]) == "mnist") example = Shape{1, 28, 28};
      if (!app.count("--scale")) {
        if (data.count("scale")) o.scale = std::stof(data["scale"]);
        if (to_lower(data["type"]) == "mnist") o.scale = 1.0f / 256;  // MNISTIter's scaling
      }
      const char* keys[2][3] = {{"mean_r", "mean_g", "mean_b"}, {"std_r", "std_g", "std_b"}};
      for (int c = 0; c < 3; ++c) {
        if (mean_text.empty() && data.count(keys[0][c])) o.mean[c] = std::stof(data[keys[0][c]]);
        if (std_text.empty() && data.count(keys[1][c])) o.std[c] = std::stof(data[keys[1][c]]);
      }
    }

    if (o.benchmark > 0) {
      if (!example.is_known())
        throw InputError(
            "--benchmark needs --data-shape (or a run directory whose config gives it)");
      auto run = [&](int batch) {
        std::vector<int64_t> dims{batch};
        dims.insert(dims.end(), example.begin(), example.end());
        NDArray input = NDArray::full(Shape(dims), 0.5);
        predictor.predict(input).wait_to_read();  // bind and warm up
        auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < o.benchmark; ++i) predictor.predict(input).wait_to_read();
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() /
               o.benchmark;
      };
      const double one = run(1), many = run(o.batch_size);
      std::cout << std::fixed << std::setprecision(3) << "latency at batch 1: " << one * 1000
                << " ms\n"
                << "throughput at batch " << o.batch_size << ": " << std::setprecision(1)
                << o.batch_size / many << " samples/s (" << std::setprecision(3) << many * 1000
                << " ms per batch, mean of " << o.benchmark << " runs)\n";
      return;
    }

    if (o.inputs.empty())
      throw InputError("give inputs: image files, a .rec file or an IDX images file");
    std::vector<Row> rows;
    const std::string& first = o.inputs[0];
    if (o.inputs.size() == 1 && first.size() > 4 &&
        first.compare(first.size() - 4, 4, ".rec") == 0) {
      if (!example.is_known()) throw InputError("a .rec input needs --data-shape C,H,W");
      std::map<std::string, std::string> p{{"path_imgrec", first},
                                           {"data_shape", example.to_string()},
                                           {"batch_size", std::to_string(o.batch_size)},
                                           {"resize", std::to_string(o.resize)},
                                           {"mean_r", std::to_string(o.mean[0])},
                                           {"mean_g", std::to_string(o.mean[1])},
                                           {"mean_b", std::to_string(o.mean[2])},
                                           {"std_r", std::to_string(o.std[0])},
                                           {"std_g", std::to_string(o.std[1])},
                                           {"std_b", std::to_string(o.std[2])},
                                           {"scale", std::to_string(o.scale)}};
      ImageRecordIter iter(ImageRecordIterParam::from_strings(p, "mx-predict"));
      rows = predict_iter(predictor, o, iter, first);
    } else if (o.inputs.size() == 1 && is_idx(first)) {
      if (o.labels.empty())
        throw InputError("an IDX images file needs --labels (the IDX labels file)");
      MNISTIter iter(MNISTIterParam::from_strings({{"image", first},
                                                   {"label", o.labels},
                                                   {"batch_size", std::to_string(o.batch_size)},
                                                   {"shuffle", "False"},
                                                   {"silent", "True"}},
                                                  "mx-predict"));
      rows = predict_iter(predictor, o, iter, first);
    } else {
      rows = predict_images(predictor, o, example);
    }

    const auto classes = read_classes(o.classes_file);
    auto class_name = [&](int k) {
      return k >= 0 && static_cast<size_t>(k) < classes.size() ? classes[static_cast<size_t>(k)]
                                                               : std::to_string(k);
    };
    int64_t labelled = 0, correct = 0;
    for (const auto& r : rows)
      if (r.label) {
        ++labelled;
        correct += r.top.front().first == *r.label ? 1 : 0;
      }
    if (o.json) {
      nlohmann::json j;
      j["model"] = predictor.params_path();
      j["predictions"] = nlohmann::json::array();
      for (const auto& r : rows) {
        nlohmann::json row{{"input", r.input}};
        for (const auto& [k, p] : r.top)
          row["top"].push_back({{"class", k}, {"name", class_name(k)}, {"probability", p}});
        if (r.label) row["label"] = *r.label;
        j["predictions"].push_back(row);
      }
      if (labelled) j["accuracy"] = static_cast<double>(correct) / static_cast<double>(labelled);
      std::cout << j.dump(2) << "\n";
      return;
    }
    const bool brief = rows.size() > 20;  // data sets: the summary, not every line
    if (!brief) {
      for (const auto& r : rows) {
        std::cout << r.input << ":";
        for (const auto& [k, p] : r.top)
          std::cout << " " << class_name(k) << " (" << std::setprecision(4) << p << ")";
        if (r.label) std::cout << "  [label " << class_name(*r.label) << "]";
        std::cout << "\n";
      }
    }
    std::cout << rows.size() << " prediction(s)";
    if (labelled)
      std::cout << "; accuracy " << std::fixed << std::setprecision(4)
                << static_cast<double>(correct) / static_cast<double>(labelled) << " (" << correct
                << "/" << labelled << ")";
    std::cout << "\n";
  });
}

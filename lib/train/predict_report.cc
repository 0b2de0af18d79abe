#include "train/predict_report.h"

#include <chrono>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/strings.h"

namespace mx::train {

std::vector<std::string> read_class_names(const std::string& path) {
  if (path.empty()) return {};
  std::ifstream in(path);
  if (!in) throw InputError("cannot open class-name file '" + path + "'");
  std::vector<std::string> names;
  for (std::string line; std::getline(in, line);) names.push_back(trim(line));
  return names;
}

void print_predictions(std::ostream& out, const std::vector<Prediction>& rows,
                       const std::vector<std::string>& class_names, bool json,
                       const std::string& model, const OutputReading& reading) {
  auto class_name = [&](int k) {
    return k >= 0 && static_cast<size_t>(k) < class_names.size()
               ? class_names[static_cast<size_t>(k)]
               : std::to_string(k);
  };
  int64_t labelled = 0, correct = 0;
  for (const auto& r : rows)
    if (r.label) {
      ++labelled;
      correct += r.top.front().first == *r.label ? 1 : 0;
    }
  if (json) {
    nlohmann::json j;
    j["model"] = model;
    if (const auto note = reading.note(); !note.empty()) j["output"] = note;
    j["predictions"] = nlohmann::json::array();
    for (const auto& r : rows) {
      nlohmann::json row{{"input", r.input}};
      for (const auto& [k, p] : r.top)
        row["top"].push_back({{"class", k}, {"name", class_name(k)}, {reading.key(), p}});
      if (r.label) row["label"] = *r.label;
      j["predictions"].push_back(row);
    }
    if (labelled) j["accuracy"] = static_cast<double>(correct) / static_cast<double>(labelled);
    out << j.dump(2) << "\n";
    return;
  }
  if (const auto note = reading.note(); !note.empty()) out << "note: " << note << "\n";
  const bool brief = rows.size() > 20;  // data sets: the summary, not every line
  if (!brief) {
    for (const auto& r : rows) {
      out << r.input << ":";
      for (const auto& [k, p] : r.top)
        out << " " << class_name(k) << " (" << std::setprecision(4) << p << ")";
      if (r.label) out << "  [label " << class_name(*r.label) << "]";
      out << "\n";
    }
  }
  out << rows.size() << " prediction(s)";
  if (labelled)
    out << "; accuracy " << std::fixed << std::setprecision(4)
        << static_cast<double>(correct) / static_cast<double>(labelled) << " (" << correct << "/"
        << labelled << ")";
  out << "\n";
}

void print_benchmark(std::ostream& out, Predictor& predictor, const Shape& example, int batch_size,
                     int runs) {
  if (!example.is_known())
    throw InputError("--benchmark needs --data-shape (or a run directory whose config gives it)");
  auto seconds_per_batch = [&](int batch) {
    std::vector<int64_t> dims{batch};
    dims.insert(dims.end(), example.begin(), example.end());
    // The batch starts where the network runs (as the peers' benchmarks
    // keep theirs on the GPU): the figures time the network, not the copy
    // of a host batch to the device.
    NDArray input = NDArray::full(Shape(dims), 0.5, predictor.context());
    predictor.predict(input).wait_to_read();  // bind and warm up
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < runs; ++i) predictor.predict(input).wait_to_read();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / runs;
  };
  const double one = seconds_per_batch(1), many = seconds_per_batch(batch_size);
  out << std::fixed << std::setprecision(3) << "latency at batch 1: " << one * 1000 << " ms\n"
      << "throughput at batch " << batch_size << ": " << std::setprecision(1) << batch_size / many
      << " samples/s (" << std::setprecision(3) << many * 1000 << " ms per batch, mean of " << runs
      << " runs)\n";
}

}  // namespace mx::train

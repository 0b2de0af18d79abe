#include "train/quantize_model.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <set>

#include "base/error.h"
#include "base/file_util.h"
#include "base/strings.h"
#include "graph/quantize_marks.h"
#include "ndarray/params_io.h"

namespace mx::train {
namespace fs = std::filesystem;
namespace {

using graph::Node;
using graph::NodeEntry;
using NodePtr = std::shared_ptr<Node>;

// Operators whose outputs the fused inference graphs hold: the values to calibrate.
bool fusable(const Node& node) {
  return !node.is_variable() && node.op->def().inference_layer != nullptr;
}

// The node whose output the fused primitive of convolution `conv` makes:
// along the chain of sole readers, the BatchNorm, activations and additions
// it absorbs; of a FullyConnected, the activation after it (op/fusion_plan.h).
// An addition fed by two convolutions goes to the first one in order, as
// the fusion plan gives it: `summed` holds the additions taken so far (call
// this for every layer in order), and a projection shortcut's primitive
// ends before the addition its block's last convolution took.
const Node* primitive_end(const Node* conv,
                          const std::map<const Node*, std::vector<const Node*>>& readers,
                          const std::set<const Node*>& heads, std::set<const Node*>& summed) {
  static const std::set<std::string> absorbed{"BatchNorm",     "Activation", "relu", "elemwise_add",
                                              "broadcast_add", "_Plus",      "_plus"};
  const bool inner_product = conv->op->def().name == "FullyConnected";
  const Node* at = conv;
  while (!heads.count(at)) {
    auto it = readers.find(at);
    if (it == readers.end() || it->second.size() != 1) break;
    const Node* next = it->second.front();
    const std::string& op = next->op->def().name;
    if (!absorbed.count(op) || (inner_product && op != "Activation")) break;
    const bool addition = op != "BatchNorm" && op != "Activation" && op != "relu";
    if (addition && !summed.insert(next).second) break;
    at = next;
    if (inner_product) break;  // an inner product takes one activation
  }
  return at;
}

void check_out_directory(const std::string& out) {
  if (fs::exists(out) && (!fs::is_directory(out) || !fs::is_empty(out)))
    throw InputError(
        out + " exists and is not an empty directory; give a new one for the quantized model");
}

// Runs `use` on at most `limit` batches of the calibration data.
// The shape of the first batch goes to `first_shape`.
CalibrationBatches batches_of(const QuantizeOptions& o, const Preprocess& pre, Shape& first_shape) {
  return [&o, pre, &first_shape](const std::function<void(const NDArray&)>& use) {
    InputBatches batches = read_input_batches(o.calibration, pre);
    for (int n = 0; o.batches <= 0 || n < o.batches; ++n) {
      auto batch = batches.next();
      if (!batch) break;
      if (n == 0) first_shape = batch->data.shape();
      use(batch->data);
    }
  };
}

double relative_error(double diff2, double ref2) { return ref2 > 0 ? std::sqrt(diff2 / ref2) : 0; }

int argmax_row(const float* row, int64_t n) {
  return static_cast<int>(std::max_element(row, row + n) - row);
}

void write_model(const QuantizeOptions& o, const Predictor& predictor, const graph::Symbol& marked,
                 const QuantizeReport& report) {
  fs::create_directories(o.out);
  const std::string prefix = (fs::path(o.out) / "model").string();
  const std::string json = marked.to_json();
  write_file_atomically(prefix + "-symbol.json", [&](std::ostream& f) { f << json; });
  NamedArrays list;
  const auto aux = marked.list_auxiliary_states();
  for (const auto& [name, array] : predictor.params()) {
    const bool is_aux = std::find(aux.begin(), aux.end(), name) != aux.end();
    list.names.push_back((is_aux ? "aux:" : "arg:") + name);
    list.arrays.push_back(array);
  }
  save_params(prefix + "-0000.params", list);
  // mx-predict reads a run's preprocessing from its config.
  if (auto config = predictor.run_config())
    fs::copy_file(*config, fs::path(o.out) / "config.yaml", fs::copy_options::overwrite_existing);
  write_file_atomically((fs::path(o.out) / "quantize-report.json").string(),
                        [&](std::ostream& f) { print_quantize_report(f, report, true); });
}

}  // namespace

namespace {

// Throws InputError for a layer in `exclude` the network does not have.
void check_excluded(const std::vector<NodePtr>& nodes, const std::vector<std::string>& exclude) {
  std::vector<std::string> layer_names;
  for (const auto& n : nodes)
    if (!n->is_variable()) layer_names.push_back(n->name);
  for (const auto& name : exclude)
    if (std::find(layer_names.begin(), layer_names.end(), name) == layer_names.end())
      throw InputError("--exclude: the model has no layer '" + name + "'" +
                       did_you_mean(name, layer_names));
}

// The values to calibrate: the data, every output a fused graph holds, and
// every input of a layer that can run in int8 (a Flatten's output).
std::vector<NodeEntry> values_to_calibrate(const std::vector<NodePtr>& nodes,
                                           const std::string& data_name) {
  std::set<const Node*> feeds_int8;
  for (const auto& n : nodes)
    if (!n->is_variable() && graph::can_run_int8(n->op->def().name) && n->inputs.at(0).index == 0)
      feeds_int8.insert(n->inputs.at(0).node.get());
  std::vector<NodeEntry> values;
  for (const auto& n : nodes)
    if (fusable(*n) || n->name == data_name || feeds_int8.count(n.get()))
      values.push_back(NodeEntry{n, 0, 0});
  return values;
}

// The FullyConnected layers whose data is 2-D (what the fused graphs take).
std::set<const Node*> fully_connected_of_2d_data(const graph::Symbol& net,
                                                 const std::vector<NodePtr>& nodes,
                                                 const std::string& data_name,
                                                 const Shape& data_shape) {
  const graph::Symbol internals = net.get_internals();
  const auto inferred = internals.infer_shape({{data_name, data_shape}});
  const auto names = internals.list_outputs();
  std::map<std::string, Shape> shape_of;
  for (size_t i = 0; i < names.size() && i < inferred.outputs.size(); ++i)
    shape_of[names[i]] = inferred.outputs[i];
  std::set<const Node*> found;
  for (const auto& n : nodes) {
    if (n->is_variable() || n->op->def().name != "FullyConnected") continue;
    const NodeEntry& data = n->inputs.at(0);
    auto it = shape_of.find(data.node->output_name(data.index));
    if (it != shape_of.end() && it->second.ndim() == 2) found.insert(n.get());
  }
  return found;
}

// Which layers run in int8: each Convolution and FullyConnected of `nodes`
// gets its row of the report, and the int8 ones their mark in `marked`
// (nodes by name). Returns, per int8 layer, the value its primitive makes.
std::vector<NodeEntry> choose_layers(const QuantizeOptions& o, const graph::Symbol& net,
                                     const std::vector<NodePtr>& nodes,
                                     const std::set<const Node*>& two_dimensional,
                                     const std::map<std::string, op::ValueRange>& range_of,
                                     std::map<std::string, NodePtr>& marked,
                                     QuantizeReport& report) {
  std::map<std::string, NodePtr> by_name;
  std::map<const Node*, std::vector<const Node*>> readers;
  for (const auto& n : nodes) {
    by_name[n->name] = n;
    for (const NodeEntry& e : n->inputs) readers[e.node.get()].push_back(n.get());
  }
  std::set<const Node*> heads;
  for (const NodeEntry& e : net.outputs()) heads.insert(e.node.get());
  std::vector<NodeEntry> ends;
  std::set<const Node*> summed;
  for (const auto& n : nodes) {
    if (n->is_variable() || !graph::can_run_int8(n->op->def().name)) continue;
    const Node* end = primitive_end(n.get(), readers, heads, summed);
    QuantizedLayer layer;
    layer.name = n->name;
    layer.op = n->op->def().name;
    const NodeEntry& data = n->inputs.at(0);
    if (std::find(o.exclude.begin(), o.exclude.end(), n->name) != o.exclude.end()) {
      layer.note = "excluded";
    } else if (layer.op == "FullyConnected" && !two_dimensional.count(n.get())) {
      layer.note = "its data is not 2-D: int8 FullyConnected takes it after a Flatten";
    } else if (!range_of.count(data.node->name) || data.index != 0) {
      layer.note = "its input is not a value a fused graph holds";
    } else {
      layer.int8 = true;
      layer.input = range_of.at(data.node->name);
      layer.output = range_of.count(end->name) ? range_of.at(end->name) : op::ValueRange{};
      marked.at(n->name)->attrs[graph::kQuantizeAttr] = "int8";
      ends.push_back(NodeEntry{by_name.at(end->name), 0, 0});
    }
    report.layers.push_back(layer);
  }
  return ends;
}

// int8 against float32 on the calibration data: the network's first output
// (relative error, top-1 agreement, accuracy when labelled) and each int8
// primitive's output (`ends`, entries of reference's network).
void compare_with_float32(const QuantizeOptions& o, const Preprocess& pre, Predictor& reference,
                          const graph::Symbol& marked,
                          const std::map<std::string, NodePtr>& marked_nodes,
                          const std::vector<NodeEntry>& ends, QuantizeReport& report) {
  // The network's output is measured as the written model runs: int8
  // values flow between int8 layers. Reading each int8 layer's output back
  // (the probes) hands those values over in float32, so the layers after a
  // probe read them unquantized; the residual stream of a ResNet then never
  // is int8, and the output of that network agrees with float32 more often
  // than the written model's. The probes give the per-layer errors only.
  Predictor deployed(o.model, o.epoch, Context::cpu());
  deployed.use_symbol(graph::Symbol({marked.outputs().front()}));
  std::vector<NodeEntry> reference_heads{reference.symbol().outputs().front()};
  std::vector<NodeEntry> probe_heads;
  for (const NodeEntry& e : ends) {
    probe_heads.push_back(NodeEntry{marked_nodes.at(e.node->name), 0, 0});
    reference_heads.push_back(e);
  }
  std::optional<Predictor> probed;
  if (!probe_heads.empty()) {
    probed.emplace(o.model, o.epoch, Context::cpu());
    probed->use_symbol(graph::Symbol(probe_heads));
  }
  std::vector<double> diff2(reference_heads.size(), 0), ref2(reference_heads.size(), 0);
  int64_t agree = 0, right_float = 0, right_int8 = 0, labelled = 0;
  InputBatches batches = read_input_batches(o.calibration, pre);
  for (int b = 0; o.batches <= 0 || b < o.batches; ++b) {
    auto batch = batches.next();
    if (!batch) break;
    const auto want = reference.internal_values(batch->data, reference_heads);
    // The output first, then each probe, in reference_heads' order.
    std::vector<NDArray> got{deployed.predict_all(batch->data)[0]};
    if (probed) {
      const auto& probes = probed->predict_all(batch->data);
      got.insert(got.end(), probes.begin(), probes.end());
    }
    for (size_t h = 0; h < want.size(); ++h) {
      const auto w = want[h].to_vector<float>();
      const auto g = got[h].to_vector<float>();
      for (size_t i = 0; i < w.size(); ++i) {
        diff2[h] += (static_cast<double>(g[i]) - w[i]) * (static_cast<double>(g[i]) - w[i]);
        ref2[h] += static_cast<double>(w[i]) * w[i];
      }
    }
    const auto w = want[0].to_vector<float>();
    const auto g = got[0].to_vector<float>();
    const int64_t rows = want[0].shape()[0], width = want[0].size() / rows;
    const auto real = static_cast<int64_t>(batch->names.size());
    for (int64_t r = 0; r < real && r < rows; ++r) {
      const int a = argmax_row(w.data() + r * width, width);
      const int c = argmax_row(g.data() + r * width, width);
      agree += a == c;
      if (static_cast<size_t>(r) < batch->labels.size()) {
        ++labelled;
        right_float += a == batch->labels[static_cast<size_t>(r)];
        right_int8 += c == batch->labels[static_cast<size_t>(r)];
      }
    }
    report.examples += real;
    ++report.batches;
  }
  report.output_error = relative_error(diff2[0], ref2[0]);
  report.top1_agreeing = agree;
  report.top1_agreement = report.examples > 0 ? static_cast<double>(agree) / report.examples : 0;
  if (labelled > 0) {
    report.accuracy_float32 = static_cast<double>(right_float) / labelled;
    report.accuracy_int8 = static_cast<double>(right_int8) / labelled;
  }
  size_t measured = 1;
  for (auto& layer : report.layers)
    if (layer.int8) {
      layer.error = relative_error(diff2[measured], ref2[measured]);
      ++measured;
    }
}

}  // namespace

QuantizeReport quantize_model(const QuantizeOptions& o) {
  check_out_directory(o.out);
  Predictor reference(o.model, o.epoch, Context::cpu());
  if (reference.int8_layers() > 0)
    throw InputError(o.model + " is quantized already (" + std::to_string(reference.int8_layers()) +
                     " int8 layers); quantize its float32 model");
  const Preprocess pre = resolve_preprocess(o.preprocess, reference);
  const graph::Symbol& net = reference.symbol();
  const auto nodes = graph::topo_order(net.outputs());
  check_excluded(nodes, o.exclude);

  const std::vector<NodeEntry> values = values_to_calibrate(nodes, reference.data_name());
  std::vector<op::ValueRange> ranges;
  Shape data_shape;  // of the first calibration batch
  try {
    ranges = calibrate(reference, values, o.mode, batches_of(o, pre, data_shape));
  } catch (const InputError& e) {
    throw InputError("calibration data " + join(o.calibration.paths, " ") + ": " + e.what());
  }
  // The marked copy of the network.
  graph::Symbol marked = graph::Symbol::from_json(net.to_json(), o.model);
  std::map<std::string, NodePtr> marked_nodes;
  for (const auto& n : graph::topo_order(marked.outputs())) marked_nodes[n->name] = n;
  std::map<std::string, op::ValueRange> range_of;
  for (size_t v = 0; v < values.size(); ++v) {
    graph::set_calibrated_range(*marked_nodes.at(values[v].node->name), ranges[v]);
    range_of[values[v].node->name] = ranges[v];
  }

  QuantizeReport report;
  report.model = o.model;
  report.out = o.out;
  report.mode = calibration_mode_name(o.mode);
  const auto two_dimensional =
      fully_connected_of_2d_data(net, nodes, reference.data_name(), data_shape);
  const auto ends = choose_layers(o, net, nodes, two_dimensional, range_of, marked_nodes, report);
  compare_with_float32(o, pre, reference, marked, marked_nodes, ends, report);
  write_model(o, reference, marked, report);
  return report;
}

void print_quantize_report(std::ostream& out, const QuantizeReport& r, bool json) {
  if (json) {
    nlohmann::json layers = nlohmann::json::array();
    for (const auto& l : r.layers) {
      nlohmann::json j{{"name", l.name}, {"op", l.op}, {"precision", l.int8 ? "int8" : "float32"}};
      if (l.int8) {
        j["input_range"] = {l.input.min, l.input.max};
        j["output_range"] = {l.output.min, l.output.max};
        j["relative_error"] = l.error;
      } else {
        j["note"] = l.note;
      }
      layers.push_back(j);
    }
    nlohmann::json j{{"model", r.model},
                     {"out", r.out},
                     {"calibration", r.mode},
                     {"batches", r.batches},
                     {"examples", r.examples},
                     {"layers", layers},
                     {"output_relative_error", r.output_error},
                     {"top1_agreement", r.top1_agreement},
                     {"top1_agreeing", r.top1_agreeing}};
    if (r.accuracy_float32) {
      j["accuracy_float32"] = *r.accuracy_float32;
      j["accuracy_int8"] = *r.accuracy_int8;
    }
    out << j.dump(2) << "\n";
    return;
  }
  auto range = [](const op::ValueRange& v) {
    std::ostringstream s;
    s << std::setprecision(4) << "[" << v.min << ", " << v.max << "]";
    return s.str();
  };
  out << r.model << " -> " << r.out << " (" << r.mode << " calibration, " << r.batches
      << " batches, " << r.examples << " examples)\n";
  size_t name_width = 6, op_width = 9;
  for (const auto& l : r.layers) {
    name_width = std::max(name_width, l.name.size() + 2);
    op_width = std::max(op_width, l.op.size() + 2);
  }
  const auto name_w = static_cast<int>(name_width), op_w = static_cast<int>(op_width);
  out << std::left << std::setw(name_w) << "layer" << std::setw(op_w) << "operator" << std::setw(11)
      << "precision" << std::setw(22) << "input range" << std::setw(22) << "output range"
      << "error\n";
  for (const auto& l : r.layers) {
    out << std::setw(name_w) << l.name << std::setw(op_w) << l.op << std::setw(11)
        << (l.int8 ? "int8" : "float32");
    if (l.int8)
      out << std::setw(22) << range(l.input) << std::setw(22) << range(l.output) << std::fixed
          << std::setprecision(2) << 100 * l.error << "%" << std::defaultfloat << "\n";
    else
      out << "(" << l.note << ")\n";
  }
  out << std::fixed << std::setprecision(2) << "output: int8 against float32 relative error "
      << 100 * r.output_error << "%, same top-1 class for " << 100 * r.top1_agreement << "% of "
      << r.examples << " examples";
  if (r.accuracy_float32)
    out << "; accuracy " << 100 * *r.accuracy_int8 << "% (float32 " << 100 * *r.accuracy_float32
        << "%)";
  out << std::defaultfloat << "\n";
}

}  // namespace mx::train

#include "train/run_curves.h"

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "base/error.h"
#include "base/strings.h"
#include "train/trainer_setup.h"
#include "viz/chart_render.h"
#include "viz/graph_render.h"
#include "viz/network_graph.h"
#include "viz/run_history.h"
#include "viz/training_chart.h"

#ifdef MX_HAVE_ONNX
#include "onnx/import.h"
#endif

namespace mx::train {
namespace fs = std::filesystem;

void redraw_run_curves(const std::string& run_dir) {
  if (!viz::charts_available()) return;
  try {
    const viz::Chart chart = viz::run_curves_chart(viz::read_run_history(run_dir));
    for (const char* name : {"curves.png", "curves.svg"})
      viz::render_chart(chart, (fs::path(run_dir) / name).string());
  } catch (const std::exception& e) {
    std::cerr << "warning: training curves not drawn: " << e.what() << "\n";
  }
}

namespace {

std::string inputs_line(const viz::NetworkPicture& p) {
  std::vector<std::string> parts;
  for (const auto& [name, shape] : p.shapes) parts.push_back(name + " " + shape.to_string());
  return join(parts, ", ");
}

}  // namespace

void draw_config_network(const Config& config, const std::string& name, const std::string& path) {
  viz::image_format(path, "--graph", true);  // a bad extension before any data is read
  TrainSettings settings = parse_train_settings(config);
  const graph::Symbol network = load_network(config);
  resolve_inputs(network, settings);
  const auto data = make_train_data(config, settings);
  viz::NetworkPicture picture;
  picture.inputs = {settings.data_name, settings.label_name};
  picture.shapes[settings.data_name] = data->data_shape();
  picture.title = name + "  (" + inputs_line(picture) + ")";
  viz::render_dot(viz::network_dot(network, picture), path);
}

void draw_model_network(const std::string& model, const std::string& data_shape,
                        const std::string& data_name, const std::string& path) {
  viz::image_format(path, "--graph output", true);
  const std::string ext = fs::path(model).extension().string();
  if (ext == ".yaml" || ext == ".yml")
    throw InputError("'" + model + "' is a config: draw it with mx-train " + model + " --graph " +
                     path);
  viz::NetworkPicture picture;
  graph::Symbol network;
  const bool onnx_file = fs::path(model).extension() == ".onnx";
  if (onnx_file) {
#ifdef MX_HAVE_ONNX
    auto imported = onnx::import_model(model);
    network = imported.symbol;
    for (const auto& input : imported.inputs) {
      picture.inputs.insert(input.name);
      Shape shape = input.shape;
      for (int i = 0; i < shape.ndim(); ++i)
        if (shape[i] < 0) shape[i] = 1;  // a symbolic batch: one example
      if (shape.rank_known()) picture.shapes[input.name] = shape;
    }
#else
    throw InputError("cannot read '" + model + "': mx was built without ONNX support");
#endif
  } else {
    network = graph::Symbol::load(model);
  }
  // The data input: the named one, else the one ONNX named, else "data".
  std::string data = data_name;
  if (data.empty()) data = picture.inputs.size() == 1 ? *picture.inputs.begin() : "data";
  const auto arguments = network.list_arguments();
  if (std::find(arguments.begin(), arguments.end(), data) == arguments.end())
    throw InputError("'" + model + "' has no input '" + data +
                     "'; its arguments: " + join(arguments, ", "));
  picture.inputs.insert(data);
  for (const auto& a : arguments)
    if (a.size() >= 6 && a.compare(a.size() - 6, 6, "_label") == 0) picture.inputs.insert(a);
  if (!data_shape.empty()) picture.shapes[data] = Shape::parse(data_shape);
  picture.title = fs::path(model).filename().string() +
                  (picture.shapes.empty() ? "" : "  (" + inputs_line(picture) + ")");
  viz::render_dot(viz::network_dot(network, picture), path);
}

}  // namespace mx::train

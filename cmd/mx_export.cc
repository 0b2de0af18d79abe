// mx-export: writes a checkpoint — mx's run directory (its latest
// checkpoint) or an MXNet 1.x PREFIX-NNNN — as an ONNX model that ONNX
// Runtime, TensorRT or OpenVINO can run.
//   mx-export RUN_DIR|PREFIX-NNNN model.onnx [--opset N] [--data-shape C,H,W | --input-shape T,N,C]
#include <iostream>
#include <optional>
#include <string>

#include "base/strings.h"
#include "ndarray/params_io.h"
#include "onnx/export.h"
#include "program.h"
#include "train/config.h"
#include "train/predictor.h"
#include "train/process_threads.h"

using namespace mx;

int main(int argc, char** argv) {
  CLI::App app{"Exports an mx or MXNet checkpoint to an ONNX model.", "mx-export"};
  std::string model, output, data_shape, input_shape;
  int opset = mx::onnx::kDefaultOpset;
  bool fixed_batch = false;
  app.add_option("model", model, "Run directory (its latest checkpoint) or PREFIX-NNNN")
      ->required();
  app.add_option("output", output, "The ONNX file to write")->required();
  app.add_option("--opset", opset, "ONNX opset (11 to 17)")->capture_default_str();
  app.add_option("--data-shape", data_shape,
                 "Shape of one example, e.g. 3,224,224 (default: the run's data_shape)");
  auto* whole = app.add_option("--input-shape", input_shape,
                               "The whole input shape, fixed, e.g. 35,1,64 for a TNC sequence "
                               "model (instead of --data-shape)");
  app.add_flag("--fixed-batch", fixed_batch, "Batch dimension 1 instead of symbolic");
  whole->excludes(app.get_option("--data-shape"));
  return run_program(app, argc, argv, [&] {
    // The same checkpoint resolution and input detection as mx-predict.
    train::apply_process_threads(train::inference_threads(Context::cpu()));
    train::Predictor predictor(model, std::nullopt, Context::cpu());
    Shape example;
    if (!data_shape.empty()) example = Shape::parse(data_shape);
    if (!input_shape.empty()) example = Shape::parse(input_shape);
    if (auto cfg = predictor.run_config(); cfg && !example.rank_known()) {
      auto data = train::Config::load(*cfg).section("data.train");
      if (data.count("data_shape")) example = Shape::parse(data["data_shape"]);
      if (!example.rank_known() && to_lower(data["type"]) == "mnist") example = Shape{1, 28, 28};
    }
    if (!example.is_known())
      throw InputError("--data-shape is needed (the checkpoint has no run config giving it)");

    std::map<std::string, NDArray> args, aux;
    NamedArrays params = load_params(predictor.params_path());
    for (size_t i = 0; i < params.names.size(); ++i) {
      const std::string& name = params.names[i];
      if (name.rfind("aux:", 0) == 0)
        aux[name.substr(4)] = params.arrays[i];
      else
        args[name.rfind("arg:", 0) == 0 ? name.substr(4) : name] = params.arrays[i];
    }
    std::vector<int64_t> dims;
    if (input_shape.empty()) dims.push_back(1);  // one example plus the batch axis
    for (int64_t d : example) dims.push_back(d);
    mx::onnx::ExportOptions options;
    options.opset = opset;
    options.dynamic_batch = !fixed_batch && input_shape.empty();
    options.input_shapes[predictor.data_name()] = Shape(dims);
    options.doc = "Exported by mx-export from " + predictor.params_path();
    mx::onnx::export_model_file(output, predictor.symbol(), args, aux, options);
    std::cout << "wrote " << output << " (opset " << opset << ", input '" << predictor.data_name()
              << "' " << Shape(dims).to_string() << ")\n";
  });
}

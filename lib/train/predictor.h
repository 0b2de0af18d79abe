// Inference with a checkpoint — mx's (a run directory), one exported by
// MXNet 1.x (PREFIX-symbol.json + PREFIX-NNNN.params) or an ONNX model
// (FILE.onnx): the network is bound for inference only, so its memory plan
// has no backward part. It changes no process-wide setting: the programs
// apply train/process_threads.h's inference_threads (one CPU engine worker)
// before building it.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "executor/executor.h"
#include "graph/symbol.h"
#include "train/checkpoint.h"

namespace mx::train {

// The arithmetic of inference: float32, or bfloat16 in the layers that run
// as fused oneDNN graphs on the CPU (BindOptions::bfloat16_inference).
enum class InferencePrecision { kFloat32, kBFloat16 };

// "fp32" or "bf16"; InputError naming `option` otherwise.
InferencePrecision parse_precision(const std::string& text, const std::string& option);

class Predictor {
 public:
  // `model`: a run directory (its latest checkpoint), "PREFIX-NNNN[.params]",
  // a PREFIX with `epoch`, or an ONNX file (FILE.onnx). bfloat16 needs the
  // CPU, oneDNN and a CPU with bfloat16 instructions: InputError otherwise.
  Predictor(const std::string& model, std::optional<int> epoch, Context ctx,
            InferencePrecision precision = InferencePrecision::kFloat32);

  // Class probabilities (or whatever the first output is), one row per
  // example of `batch` (shape (N, ...) matching the network's input).
  NDArray predict(const NDArray& batch);
  // Every output of the network for `batch` (predict gives the first).
  const std::vector<NDArray>& predict_all(const NDArray& batch);

  // The values of `entries` (outputs of nodes of symbol()) for `batch`,
  // computed layer by layer in float32: what calibration observes.
  std::vector<NDArray> internal_values(const NDArray& batch,
                                       const std::vector<graph::NodeEntry>& entries);

  // Runs `symbol` (the same network, e.g. marked for int8 by mx-quantize)
  // over the same parameters from now on.
  void use_symbol(graph::Symbol symbol);

  const graph::Symbol& symbol() const { return symbol_; }
  // The file the weights come from: the checkpoint's .params, or the .onnx.
  std::string params_path() const { return onnx_path_.empty() ? paths_.params() : onnx_path_; }
  // The run's config.yaml next to the checkpoint, when there is one.
  std::optional<std::string> run_config() const;
  const std::string& data_name() const { return data_name_; }
  // The model file's arrays by name (arg: and aux: prefixes removed), and
  // the device they are on.
  const std::map<std::string, NDArray>& params() const { return params_; }
  Context context() const { return ctx_; }
  // One example's shape as the model file states it (ONNX models state their
  // input's shape; checkpoints do not): unknown rank when it does not.
  const Shape& stated_example_shape() const { return stated_example_; }
  // Layers the model marks to run in int8 (graph/quantize_marks.h).
  int int8_layers() const { return int8_layers_; }

 private:
  void load_checkpoint(const std::string& model, std::optional<int> epoch);
  void load_onnx(const std::string& path);
  void bind(const Shape& data_shape);
  void warn_about_int8() const;
  std::unique_ptr<Executor> make_executor(const graph::Symbol& symbol, const Shape& data_shape,
                                          bool fuse) const;

  CheckpointPaths paths_;
  std::string onnx_path_;  // set for an ONNX model
  Shape stated_example_;
  std::string run_dir_;
  graph::Symbol symbol_;
  std::string data_name_ = "data";
  Context ctx_;
  InferencePrecision precision_;
  int int8_layers_ = 0;
  std::map<std::string, NDArray> params_;  // arg: and aux: arrays from the file
  std::unique_ptr<Executor> exe_;
  std::unique_ptr<Executor> values_exe_;  // internal_values' executor and its heads
  std::vector<graph::NodeEntry> values_entries_;
};

}  // namespace mx::train

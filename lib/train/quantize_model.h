// mx-quantize's work: post-training int8 quantization of a float32 model.
// The convolutions and FullyConnected layers run in int8
// (graph/quantize_marks.h: per-channel weight
// scales, calibrated activation ranges), the model is written as an mx
// checkpoint that mx-predict runs, and a report lists every layer with its
// ranges and its int8-against-float32 error on the calibration data.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "op/inference_layer.h"
#include "train/calibration.h"
#include "train/predict_inputs.h"

namespace mx::train {

struct QuantizeOptions {
  std::string model;  // as mx-predict takes it
  std::optional<int> epoch;
  std::string out;            // a directory, written as a run directory's checkpoint
  PredictInputs calibration;  // the calibration data and its batch size
  PreprocessOptions preprocess;
  CalibrationMode mode = CalibrationMode::kMse;
  int batches = 10;                  // of calibration data (<= 0: all)
  std::vector<std::string> exclude;  // layers kept in float32
};

struct QuantizedLayer {
  std::string name, op;
  bool int8 = false;
  std::string note;        // why it stays float32
  op::ValueRange input{};  // calibrated, of its data input
  op::ValueRange output{};
  // ||int8 - float32|| / ||float32|| of what its fused primitive makes (the
  // layer with the BatchNorm, activation and addition after it), on the
  // calibration data; negative when not measured.
  double error = -1;
};

struct QuantizeReport {
  std::string model, out, mode;
  int batches = 0;
  int64_t examples = 0;
  std::vector<QuantizedLayer> layers;
  double output_error = 0;  // relative, of the network's first output
  double top1_agreement = 0;
  int64_t top1_agreeing = 0;  // examples whose top-1 class int8 and float32 agree on
  std::optional<double> accuracy_float32, accuracy_int8;  // when the data has labels
};

// Throws InputError for a model that is quantized already, an OUT that
// exists and is not empty, a layer in `exclude` that the model does not
// have, or calibration data that does not fit the model.
QuantizeReport quantize_model(const QuantizeOptions& options);

void print_quantize_report(std::ostream& out, const QuantizeReport& report, bool json);

}  // namespace mx::train

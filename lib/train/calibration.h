// Post-training calibration (mx-quantize): runs a float32 network over
// calibration batches and finds, for each value an int8 network holds in
// int8, the range to quantize it over — the elements' min and max seen
// (naive), or the KL-optimal clipping threshold of their histogram
// (entropy), as MXNet 1.x's quantization calibrates, or the threshold of
// least expected squared quantization error (mse), found for each batch
// and averaged over the batches.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "graph/node.h"
#include "op/inference_layer.h"
#include "train/predictor.h"

namespace mx::train {

enum class CalibrationMode { kNaive, kEntropy, kMse };

// "naive", "entropy" or "mse"; InputError naming `option` otherwise.
CalibrationMode parse_calibration_mode(const std::string& text, const std::string& option);
const char* calibration_mode_name(CalibrationMode mode);

// Calls its argument with each calibration batch in turn, from the start
// each time (entropy calibration reads them twice).
using CalibrationBatches = std::function<void(const std::function<void(const NDArray&)>&)>;

// The ranges of `values` (entries of predictor.symbol()), in their order.
// Entropy and mse: a value without negative elements is clipped to
// [0, threshold] (it is held as uint8; 511 histogram levels for KL, 255
// steps for mse), any other to [-threshold, threshold] (255 levels, 127
// steps), from histograms of 8001 bins over the naive range. InputError
// when there are no batches.
std::vector<op::ValueRange> calibrate(Predictor& predictor,
                                      const std::vector<graph::NodeEntry>& values,
                                      CalibrationMode mode, const CalibrationBatches& batches);

}  // namespace mx::train

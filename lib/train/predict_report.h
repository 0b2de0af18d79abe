// What mx-predict prints: the predictions with class names and the accuracy
// over labelled inputs (text or JSON), or latency and throughput.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "train/predict_inputs.h"

namespace mx::train {

// Class names, one per line (line k names class k); none for an empty path.
std::vector<std::string> read_class_names(const std::string& path);

// Text lists every prediction for up to 20 inputs and then the count and
// accuracy; JSON always lists them all. Classes without a name print as numbers.
// The figures are named by `reading` (probability or score); how they were
// made is said once (text: a first line "note: ...", JSON: "output").
void print_predictions(std::ostream& out, const std::vector<Prediction>& rows,
                       const std::vector<std::string>& class_names, bool json,
                       const std::string& model, const OutputReading& reading);

// Latency at batch 1 and throughput at `batch_size`, each the mean of `runs`
// predictions after a warm-up one, on constant inputs of `example`'s shape.
void print_benchmark(std::ostream& out, Predictor& predictor, const Shape& example, int batch_size,
                     int runs);

}  // namespace mx::train

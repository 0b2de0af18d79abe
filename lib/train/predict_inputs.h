// What mx-predict runs a checkpoint on: image files, one .rec file or one
// IDX images file (with its labels), batched and preprocessed as the
// training run's data was, and the top-k classes of every input.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/shape.h"
#include "train/predictor.h"

namespace mx::train {

// Preprocessing as given on the command line; what is not given comes from
// the run's data.train section (when the model is a run directory), else
// from MXNet's defaults.
struct PreprocessOptions {
  std::string data_shape;  // one example, e.g. "3,224,224"
  std::optional<std::array<float, 3>> mean, std;
  std::optional<float> scale;
  int resize = -1;  // shorter side before the center crop (-1: none)
};

struct Preprocess {
  Shape example;  // one example's shape; unknown rank when nothing gives it
  std::array<float, 3> mean{0, 0, 0}, std{1, 1, 1};
  float scale = 1;
  int resize = -1;
};

// Throws InputError for an unparsable shape.
Preprocess resolve_preprocess(const PreprocessOptions& given, const Predictor& predictor);

struct PredictInputs {
  std::vector<std::string> paths;  // image files, one .rec file or one IDX images file
  std::string labels;              // the IDX labels file of an IDX images file
  int batch_size = 32;
  int top_k = 5;
};

struct Prediction {
  std::string input;  // the image file, or "FILE#N" for example N of a .rec or IDX file
  std::vector<std::pair<int, float>> top;  // (class, probability), most probable first
  std::optional<int> label;                // when the input carries one
};

// Throws InputError for missing inputs, an unknown example shape, or an
// image that cannot be read.
std::vector<Prediction> predict_inputs(Predictor& predictor, const PredictInputs& inputs,
                                       const Preprocess& preprocess);

}  // namespace mx::train

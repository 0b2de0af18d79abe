// What mx-predict runs a checkpoint on: image files, one .rec file or one
// IDX images file (with its labels), batched and preprocessed as the
// training run's data was, and the top-k classes of every input.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
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

// "r,g,b" of --mean and --std; nothing for an empty text. InputError naming
// `option` for anything but three numbers.
std::optional<std::array<float, 3>> parse_rgb(const std::string& text, const char* option);

// Throws InputError for an unparsable shape.
Preprocess resolve_preprocess(const PreprocessOptions& given, const Predictor& predictor);

// What the network's first output means and how mx-predict turns it into
// the figures it reports. Networks exported from Gluon end in a Dense layer
// (logits), mx's and MXNet's symbolic ones in SoftmaxOutput.
struct OutputReading {
  enum class Kind {
    probability,      // the network ends in a softmax: its outputs as they are
    softmax_applied,  // logits: mx-predict applies a softmax over each row
    exp_applied,      // log_softmax: mx-predict applies exp
    raw,              // --raw: the outputs as they are, reported as scores
  };
  Kind kind = Kind::probability;
  std::string last_op, last_name;  // the operator and layer the network ends in

  // "probability", or "score" for raw outputs.
  std::string key() const;
  // One sentence saying how the figures were made; empty when the network's
  // outputs are probabilities already.
  std::string note() const;
  // Turns one example's outputs into what is reported, in place.
  void apply(float* values, int64_t n) const;
};

// From the last operator of `symbol`'s first output; `raw` keeps the outputs.
OutputReading read_output(const graph::Symbol& symbol, bool raw);

struct PredictInputs {
  std::vector<std::string> paths;  // image files, one .rec file or one IDX images file
  std::string labels;              // the IDX labels file of an IDX images file
  int batch_size = 32;
  int top_k = 5;
};

struct Prediction {
  std::string input;  // the image file, or "FILE#N" for example N of a .rec or IDX file
  std::vector<std::pair<int, float>> top;  // (class, probability or score), highest first
  std::optional<int> label;                // when the input carries one
};

// One batch of inputs: the data, the labels (when the inputs carry them)
// and each example's name.
struct InputBatch {
  NDArray data;
  std::vector<int> labels;
  std::vector<std::string> names;
};
// The batches of a set of inputs: `next` gives them in order, then nullopt.
struct InputBatches {
  std::function<std::optional<InputBatch>()> next;
  std::optional<int64_t> count;  // batches, when known
  std::string source;            // the file, or "images"
};

// The inputs read and preprocessed in batches of inputs.batch_size. Throws
// InputError for missing inputs or an unknown example shape, and (from
// `next`) for an image that cannot be read.
InputBatches read_input_batches(const PredictInputs& inputs, const Preprocess& preprocess);

// Throws InputError for missing inputs, an unknown example shape, or an
// image that cannot be read.
std::vector<Prediction> predict_inputs(Predictor& predictor, const PredictInputs& inputs,
                                       const Preprocess& preprocess, const OutputReading& reading);

}  // namespace mx::train

// train.pretrained: weights to start training from, read from an MXNet
// .params file or from the initializers of an ONNX model (by name), then
// matched to the network and reported by optim::apply_pretrained.
#pragma once

#include <map>
#include <string>

#include "ndarray/ndarray.h"
#include "optim/initializer.h"

namespace mx::train {

// Copies the weights of `path` into `targets`: a path ending in ".onnx" is
// read as an ONNX model (every initializer, under its ONNX name, without
// importing the graph, so a model whose operators mx cannot run still gives
// its weights); anything else as a .params file. InputError names the file
// when it cannot be read, or when this build has no ONNX support.
optim::PretrainedReport load_pretrained_weights(const std::string& path,
                                                const std::map<std::string, NDArray>& targets);

}  // namespace mx::train

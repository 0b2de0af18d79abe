// The pictures of a training run: curves.png and curves.svg in its run
// directory, drawn from its metrics.jsonl at the end of every epoch (and so
// at the end of the run), and the network of a config drawn by
// mx-train --graph.
#pragma once

#include <string>

#include "train/config.h"

namespace mx::train {

// Redraws RUN_DIR/curves.png and curves.svg from RUN_DIR/metrics.jsonl.
// Training goes on whatever happens: a failure is one warning on stderr,
// and a build without Cairo draws nothing.
void redraw_run_curves(const std::string& run_dir);

// Draws the network of `config` (its `network` or `symbol`, with the
// training data's shape) to `path`: .svg, .png or .dot, titled `name`.
// Opens the training data for its shape; trains nothing.
void draw_config_network(const Config& config, const std::string& name, const std::string& path);

// Draws the network of an MXNet PREFIX-symbol.json or an ONNX model file.
// `data_shape` ("1,3,224,224", empty: the ONNX model's own input shapes, or
// none) is the shape of the input `data_name`.
void draw_model_network(const std::string& model, const std::string& data_shape,
                        const std::string& data_name, const std::string& path);

}  // namespace mx::train

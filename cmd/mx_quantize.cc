// mx-quantize: post-training int8 quantization of a float32 model (mx's run
// directory, an MXNet 1.x checkpoint or an ONNX model), calibrated on data
// mx-predict can read (.rec, IDX or image files). Writes OUT as a run
// directory whose checkpoint mx-predict runs with its convolutions in int8,
// and prints the report of every layer. The work is done by
// lib/train/quantize_model; this file reads the command line.
#include <iostream>
#include <string>
#include <vector>

#include "base/strings.h"
#include "program.h"
#include "train/process_threads.h"
#include "train/quantize_model.h"

using namespace mx;

int main(int argc, char** argv) {
  CLI::App app{"Quantize a float32 model to int8 with calibration data", "mx-quantize"};
  train::QuantizeOptions o;
  int epoch = -1;
  std::string mode = "mse", exclude, mean_text, std_text;
  float scale = 1;
  bool json = false;
  app.add_option("model", o.model, "run directory, PREFIX-NNNN, PREFIX with --epoch, or FILE.onnx")
      ->required();
  app.add_option("out", o.out, "directory for the quantized model (new or empty)")->required();
  app.add_option("--calibration", o.calibration.paths,
                 "calibration data: one .rec file, an IDX images file (with --labels) or image "
                 "files; use images the evaluation does not")
      ->required();
  app.add_option("--labels", o.calibration.labels, "IDX labels file for an IDX images file");
  app.add_option("--mode", mode,
                 "naive: the ranges seen; entropy: the KL-optimal clipping of each range; mse: the "
                 "clipping of least squared quantization error")
      ->capture_default_str();
  app.add_option("--batches", o.batches, "calibration batches to read (0: all)")
      ->capture_default_str();
  app.add_option("--batch-size", o.calibration.batch_size, "examples per batch")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--exclude", exclude, "layers to keep in float32, comma-separated");
  app.add_option("--epoch", epoch, "checkpoint epoch (with a PREFIX)");
  app.add_option("--data-shape", o.preprocess.data_shape,
                 "one example's shape for images and .rec, e.g. 3,224,224");
  app.add_option("--mean", mean_text, "per-channel mean r,g,b subtracted from images");
  app.add_option("--std", std_text, "per-channel std r,g,b images are divided by");
  app.add_option("--scale", scale, "pixel scale applied after mean/std");
  app.add_option("--resize", o.preprocess.resize, "shorter side before the center crop");
  app.add_flag("--json", json, "print the report as JSON");

  return run_program(app, argc, argv, [&] {
    o.mode = train::parse_calibration_mode(mode, "--mode");
    if (epoch >= 0) o.epoch = epoch;
    if (!exclude.empty()) o.exclude = split(exclude, ',');
    o.preprocess.mean = train::parse_rgb(mean_text, "--mean");
    o.preprocess.std = train::parse_rgb(std_text, "--std");
    if (app.count("--scale")) o.preprocess.scale = scale;
    train::apply_process_threads(train::inference_threads(Context::cpu()));
    const train::QuantizeReport report = train::quantize_model(o);
    train::print_quantize_report(std::cout, report, json);
  });
}

// mx-predict: predicts with a checkpoint (mx's run directory, or an MXNet
// 1.x PREFIX-symbol.json + PREFIX-NNNN.params) on image files, a .rec file
// or IDX files; top-k classes with probabilities (a softmax applied when the
// network ends without one; --raw: its outputs as scores), accuracy when the inputs
// carry labels, latency and throughput with --benchmark. The work is done by
// lib/train (predictor, predict_inputs, predict_report); this file reads the
// command line. With --generate it samples text from a language model
// (train/text_generator.h).
#include <array>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "base/strings.h"
#include "program.h"
#include "train/device_setup.h"
#include "train/predict_report.h"
#include "train/process_threads.h"
#include "train/text_generator.h"

using namespace mx;

int main(int argc, char** argv) {
  CLI::App app{
      "Predict with a checkpoint (mx's or MXNet 1.x's) on images, a .rec file or IDX files",
      "mx-predict"};
  std::string model, classes_file, device = "cpu", mean_text, std_text, precision = "fp32";
  int epoch = -1, benchmark = 0;
  bool json = false, raw = false;
  float scale = 1;
  train::PredictInputs inputs;
  train::PreprocessOptions preprocess;
  app.add_option("--model,-m", model, "run directory, PREFIX-NNNN, or PREFIX with --epoch")
      ->required();
  app.add_option("--epoch", epoch, "checkpoint epoch (with a PREFIX)");
  app.add_option("inputs", inputs.paths,
                 "image files, one .rec file, or an IDX images file (labels: --labels)");
  app.add_option("--labels", inputs.labels, "IDX labels file for an IDX images file");
  app.add_option("--batch-size", inputs.batch_size, "examples per batch")
      ->check(CLI::PositiveNumber);
  app.add_option("--top-k", inputs.top_k,
                 "classes to show per input (with --generate: sample among the K most likely)")
      ->check(CLI::PositiveNumber);
  app.add_option("--classes", classes_file, "class names, one per line (line k = class k)");
  app.add_option("--data-shape", preprocess.data_shape,
                 "one example's shape for images and .rec, e.g. 3,224,224");
  app.add_option("--mean", mean_text, "per-channel mean r,g,b subtracted from images");
  app.add_option("--std", std_text, "per-channel std r,g,b images are divided by");
  app.add_option("--scale", scale, "pixel scale applied after mean/std");
  app.add_option("--resize", preprocess.resize, "shorter side before the center crop");
  app.add_option("--device", device, "cpu or gpu:N");
  app.add_option("--precision", precision,
                 "fp32, or bf16: the CPU's oneDNN layers in bfloat16 (about twice as fast on "
                 "CPUs with AVX512-BF16, about 3 significant digits)")
      ->default_str("fp32");
  app.add_flag("--json", json, "print JSON");
  app.add_flag("--raw", raw,
               "report the network's outputs as scores, without the softmax applied to a "
               "network that ends without one");
  train::GenerateOptions generate;
  std::string vocab;
  app.add_option("--generate", generate.tokens,
                 "language models: sample N tokens after --prompt, streamed as drawn");
  app.add_option("--prompt", generate.prompt, "with --generate: the text to continue");
  app.add_option("--temperature", generate.temperature,
                 "with --generate: below 1 more likely tokens, above 1 more varied")
      ->capture_default_str();
  app.add_option("--seed", generate.seed, "with --generate: the sampling seed")
      ->capture_default_str();
  app.add_option("--context", generate.context,
                 "with --generate: the tokens a model without carried states (a transformer) "
                 "sees at each step (default: the run's data.train.seq_len, else 256)");
  app.add_option("--vocab", vocab,
                 "with --generate: the .vocab file (default: the one beside the run's "
                 "training text)");
  app.add_option("--benchmark", benchmark,
                 "latency at batch 1 and throughput at --batch-size over N runs")
      ->expected(0, 1)
      ->default_str("20");

  return run_program(app, argc, argv, [&] {
    preprocess.mean = train::parse_rgb(mean_text, "--mean");
    preprocess.std = train::parse_rgb(std_text, "--std");
    if (app.count("--scale")) preprocess.scale = scale;
    if (app.count("--benchmark") && benchmark <= 0) benchmark = 20;
    const Context ctx = Context::parse(device);
    train::check_devices({ctx}, "--device");
    train::apply_process_threads(train::inference_threads(ctx));
    train::Predictor predictor(model, epoch >= 0 ? std::optional<int>(epoch) : std::nullopt, ctx,
                               train::parse_precision(precision, "--precision"));
    if (app.count("--generate")) {
      // --top-k means: sample among the K most likely tokens.
      generate.top_k = app.count("--top-k") ? inputs.top_k : 0;
      const auto words = train::generation_vocabulary(
          predictor, vocab.empty() ? std::nullopt : std::optional<std::string>(vocab));
      train::generate_text(predictor, words, generate, std::cout);
      return;
    }
    const train::Preprocess pre = train::resolve_preprocess(preprocess, predictor);
    if (benchmark > 0) {
      train::print_benchmark(std::cout, predictor, pre.example, inputs.batch_size, benchmark);
      return;
    }
    const auto reading = train::read_output(predictor.symbol(), raw);
    const auto rows = train::predict_inputs(predictor, inputs, pre, reading);
    train::print_predictions(std::cout, rows, train::read_class_names(classes_file), json,
                             predictor.params_path(), reading);
  });
}

// mx-plot: pictures of training runs and networks (docs/pictures.md).
//   mx-plot runs/lr0.1 runs/lr0.05 -o compare.png --metric val.accuracy
//   mx-plot runs/1-worker runs/4-workers -o time.svg --metric val.accuracy --x time
//   mx-plot --graph resnet-18-symbol.json --shape 1,3,224,224 -o resnet18.svg
#include <iostream>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/strings.h"
#include "program.h"
#include "train/run_curves.h"
#include "viz/chart_render.h"
#include "viz/run_history.h"
#include "viz/training_chart.h"

int main(int argc, char** argv) {
  CLI::App app{"Draw training runs on the same axes, or a network's graph", "mx-plot"};
  std::vector<std::string> run_dirs, metrics;
  std::string output, model, shape, data_name;
  bool list = false;
  app.add_option("runs", run_dirs, "run directories of mx-train (each has a metrics.jsonl)");
  app.add_option("-o,--output", output, "the picture to write: .png or .svg (.dot for --graph)");
  app.add_option("--metric", metrics,
                 "the series to draw, e.g. val.accuracy (repeat or separate with commas; "
                 "default: the validation metrics and the learning rate)")
      ->delimiter(',');
  std::string x_axis = "epoch";
  app.add_option("--x", x_axis,
                 "the x axis of compared runs: epoch, or time (training time at each epoch's end, "
                 "as in the MXNet paper's convergence figure)")
      ->check(CLI::IsMember({"epoch", "time"}));
  app.add_flag("--list", list, "print the series the runs have, then exit");
  app.add_option("--graph", model, "draw this network instead: an MXNet -symbol.json or an .onnx");
  app.add_option("--shape", shape, "with --graph: the input's shape, e.g. 1,3,224,224");
  app.add_option("--data-name", data_name,
                 "with --graph: the input --shape is for (default: data)");

  return mx::run_program(app, argc, argv, [&] {
    if (!model.empty()) {
      if (!run_dirs.empty())
        throw mx::InputError("give either run directories or --graph MODEL, not both");
      if (output.empty()) throw mx::InputError("give the picture to write with -o FILE.svg");
      mx::train::draw_model_network(model, shape, data_name, output);
      return;
    }
    if (run_dirs.empty())
      throw mx::InputError("give one or more run directories (or --graph MODEL); see --help");
    if (!list) {
      if (output.empty()) throw mx::InputError("give the picture to write with -o FILE.png");
      mx::viz::image_format(output, "-o", false);
    }
    std::vector<mx::viz::RunHistory> runs;
    for (const auto& dir : run_dirs) runs.push_back(mx::viz::read_run_history(dir));
    if (list) {
      for (const auto& run : runs)
        std::cout << run.name << ": " << mx::join(run.names(), " ") << "\n";
      return;
    }
    // One run without --metric: its curves, as curves.png shows them.
    const auto x = x_axis == "time" ? mx::viz::XAxis::kTime : mx::viz::XAxis::kEpoch;
    const auto chart = runs.size() == 1 && metrics.empty() && x == mx::viz::XAxis::kEpoch
                           ? mx::viz::run_curves_chart(runs[0])
                           : mx::viz::compare_chart(runs, metrics, x);
    mx::viz::render_chart(chart, output);
    std::cout << "wrote " << output << "\n";
  });
}

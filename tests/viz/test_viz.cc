// The pictures: ticks, the chart model, the run history reader, the
// training charts, the network graph's dot text and the renderers' files.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/error.h"
#include "error_text.h"
#include "graph/symbol.h"
#include "temp_dir.h"
#include "viz/chart.h"
#include "viz/chart_render.h"
#include "viz/graph_render.h"
#include "viz/network_graph.h"
#include "viz/run_history.h"
#include "viz/ticks.h"
#include "viz/training_chart.h"

using namespace mx;
using namespace mx::viz;

namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t p = text.find(part); p != std::string::npos; p = text.find(part, p + 1)) ++n;
  return n;
}

const char* kThreeEpochs =
    R"({"epoch":1,"train":{"accuracy":0.5,"cross-entropy":1.2},"val":{"accuracy":0.6,"cross-entropy":1.0},"seconds":2,"samples_per_sec":100,"learning_rate":0.1}
{"epoch":2,"train":{"accuracy":0.7,"cross-entropy":0.8},"val":{"accuracy":0.75,"cross-entropy":0.7},"seconds":2,"samples_per_sec":110,"learning_rate":0.1}
{"epoch":3,"train":{"accuracy":0.8,"cross-entropy":0.5},"val":{"accuracy":0.72,"cross-entropy":null},"seconds":2,"samples_per_sec":120,"learning_rate":0.02}
)";

}  // namespace

TEST_CASE("nice_ticks covers the range with round steps") {
  Ticks t = nice_ticks(0.0, 1.0, 6);
  CHECK(t.lo == 0.0);
  CHECK(t.hi == doctest::Approx(1.0));
  CHECK(t.step == doctest::Approx(0.2));
  REQUIRE(t.values.size() == 6);
  CHECK(t.values[3] == doctest::Approx(0.6));
  CHECK(t.decimals == 1);

  t = nice_ticks(0.352, 0.598, 6);
  CHECK(t.lo <= 0.352);
  CHECK(t.hi >= 0.598);
  CHECK(t.step == doctest::Approx(0.05));
  CHECK(t.decimals == 2);
  CHECK(t.values.size() <= 6);

  t = nice_ticks(1, 3, 9, true);  // epochs
  CHECK(t.values == std::vector<double>{1, 2, 3});
  CHECK(t.decimals == 0);
  t = nice_ticks(1, 200, 9, true);
  CHECK(t.step == doctest::Approx(25));
  CHECK(t.values.size() <= 9);
  CHECK(t.values.back() >= 200);

  // A step of 2.5 needs a decimal more than its power of ten.
  t = nice_ticks(0, 10, 5);
  CHECK(t.step == doctest::Approx(2.5));
  CHECK(t.decimals == 1);

  // Descending bounds, negative ranges, no "-0".
  t = nice_ticks(1, -1, 5);
  CHECK(t.lo == doctest::Approx(-1));
  CHECK(t.hi == doctest::Approx(1));
  for (double v : t.values) CHECK_FALSE((v == 0 && std::signbit(v)));
}

TEST_CASE("nice_ticks widens a single value and refuses non-finite ranges") {
  Ticks t = nice_ticks(0.05, 0.05);
  CHECK(t.lo < 0.05);
  CHECK(t.hi > 0.05);
  t = nice_ticks(0, 0);
  CHECK(t.lo <= -1);
  CHECK(t.hi >= 1);
  CHECK_THROWS_AS(nice_ticks(0, NAN), Error);
  CHECK_THROWS_AS(nice_ticks(-INFINITY, 1), Error);
}

TEST_CASE("tick labels") {
  CHECK(tick_label(0.5, 2) == "0.50");
  CHECK(tick_label(3, 0) == "3");
  CHECK(tick_label(0.00001, 5) == "1e-05");
  CHECK(tick_label(2500000, 0) == "2.5e+06");
}

TEST_CASE("panel ranges and legend entries") {
  Panel p;
  CHECK_FALSE(has_data(p));
  CHECK_THROWS_AS(data_range(p), Error);
  p.series.push_back({"train", {{1, 0.5}, {2, NAN}, {3, 0.2}}, 0, LineStyle::kSolid});
  p.series.push_back({"validation", {{1, 0.9}, {2, 0.1}}, 1, LineStyle::kDashed});
  p.series.push_back({"train", {{4, 0.3}}, 0, LineStyle::kSolid});  // the same entry again
  p.series.push_back({"", {{5, 7}}, 2, LineStyle::kSolid});         // not in the legend
  CHECK(has_data(p));
  const Range r = data_range(p);
  CHECK(r.x_lo == 1);
  CHECK(r.x_hi == 5);
  CHECK(r.y_lo == doctest::Approx(0.1));
  CHECK(r.y_hi == 7);
  const auto legend = legend_entries(p);
  REQUIRE(legend.size() == 2);
  CHECK(legend[0].name == "train");
  CHECK(legend[1].name == "validation");
  CHECK(legend[1].style == LineStyle::kDashed);
}

TEST_CASE("the run history reads metrics.jsonl into series") {
  const RunHistory run = parse_run_history(kThreeEpochs, "m.jsonl");
  CHECK(run.epochs == std::vector<double>{1, 2, 3});
  CHECK(run.names() == std::vector<std::string>{"learning_rate", "samples_per_sec", "seconds",
                                                "train.accuracy", "train.cross-entropy",
                                                "val.accuracy", "val.cross-entropy"});
  CHECK(run.series.at("val.accuracy")[1] == doctest::Approx(0.75));
  CHECK(std::isnan(run.series.at("val.cross-entropy")[2]));  // null: not finite
  const auto best = best_value(run, "val.accuracy");
  REQUIRE(best);
  CHECK(best->value == doctest::Approx(0.75));
  CHECK(best->epoch == 2);
  const auto lowest = best_value(run, "train.cross-entropy");
  REQUIRE(lowest);
  CHECK(lowest->value == doctest::Approx(0.5));
  CHECK(headline_metric(run) == std::optional<std::string>("val.accuracy"));
  CHECK_FALSE(best_value(run, "val.nothing"));
}

TEST_CASE("a resumed run's repeated epoch keeps its last record") {
  const RunHistory run = parse_run_history(
      "{\"epoch\":1,\"train\":{\"accuracy\":0.1}}\n{\"epoch\":2,\"train\":{\"accuracy\":0.2}}\n"
      "{\"epoch\":2,\"train\":{\"accuracy\":0.3}}\n\n",
      "m");
  CHECK(run.epochs == std::vector<double>{1, 2});
  CHECK(run.series.at("train.accuracy")[1] == doctest::Approx(0.3));
  CHECK_FALSE(headline_metric(run));
}

TEST_CASE("bad and truncated histories are clear errors naming the line") {
  CHECK(mx::test::error_text([] { parse_run_history("", "run/metrics.jsonl"); }) ==
        "run/metrics.jsonl: no epoch recorded yet");
  CHECK(mx::test::error_text([] {
          parse_run_history("{\"epoch\":1}\nnot json\n{\"epoch\":2}\n", "f");
        }) == "f:2: not a JSON line: 'not json'");
  CHECK(mx::test::error_text([] {
          parse_run_history("{\"epoch\":1}\n{\"epoch\":2,\"train\":{\"acc", "f");
        }).find("f:2: the last line is cut short") == 0);
  CHECK(mx::test::error_text([] { parse_run_history("[1, 2]\n", "f"); }) ==
        "f:1: expected a JSON object with an \"epoch\" number");
  CHECK(mx::test::error_text([] { parse_run_history("{\"train\":{}}\n", "f"); }) ==
        "f:1: expected a JSON object with an \"epoch\" number");
  CHECK(mx::test::error_text([] {
          parse_run_history("{\"epoch\":1,\"val\":{\"acc\":\"x\"}}\n", "f");
        }) == "f:1: \"val\".acc is not a number");
  CHECK(mx::test::error_text([] { parse_run_history("{\"epoch\":-3}\n", "f"); }) ==
        "f:1: bad epoch -3");
}

TEST_CASE("read_run_history names the run and reports missing files") {
  test::TempDir dir("viz_history");
  CHECK(mx::test::error_text([&] { read_run_history(dir.file("absent")); }) ==
        "run directory '" + dir.file("absent") + "' does not exist");
  CHECK(mx::test::error_text([&] {
          read_run_history(dir.path().string());
        }).find("metrics.jsonl' is missing") != std::string::npos);
  std::filesystem::create_directories(dir.path() / "lr0.1");
  std::ofstream(dir.path() / "lr0.1" / "metrics.jsonl") << kThreeEpochs;
  const RunHistory run = read_run_history((dir.path() / "lr0.1/").string());
  CHECK(run.name == "lr0.1");
  CHECK(run.epochs.size() == 3);
}

// Every 2 batches of 4 per epoch, the first epoch's length unknown while it ran.
const char* kIntervals =
    R"({"epoch":1,"batch":2,"log_interval":2,"train":{"accuracy":0.3,"cross-entropy":1.5}}
{"epoch":1,"batch":4,"log_interval":2,"train":{"accuracy":0.5,"cross-entropy":1.2}}
{"epoch":2,"batch":2,"batches_per_epoch":4,"log_interval":2,"train":{"accuracy":0.6,"cross-entropy":null}}
{"epoch":2,"batch":4,"batches_per_epoch":4,"log_interval":2,"train":{"accuracy":0.7,"cross-entropy":0.8}}
)";

TEST_CASE("the run history reads intervals.jsonl into points at fractional epochs") {
  const IntervalHistory points = parse_interval_history(kIntervals, "i.jsonl");
  CHECK(points.log_interval == 2);
  // Epoch 1's length comes from epoch 2's records.
  CHECK(points.positions == std::vector<double>{0.5, 1, 1.5, 2});
  REQUIRE(points.series.size() == 2);
  CHECK(points.series.at("train.accuracy")[2] == doctest::Approx(0.6));
  CHECK(std::isnan(points.series.at("train.cross-entropy")[2]));
  CHECK(parse_interval_history("", "i").empty());
  // No record knows the length: the epoch's largest batch.
  CHECK(parse_interval_history("{\"epoch\":3,\"batch\":1}\n{\"epoch\":3,\"batch\":4}\n", "i")
            .positions == std::vector<double>{2.25, 3});
}

TEST_CASE("a resumed run's points replace the earlier ones from their place on") {
  // Stopped after batch 6 of 8 in epoch 1; resumed from its checkpoint at batch 4.
  std::string text;
  for (auto [batch, accuracy] :
       std::vector<std::pair<int, double>>{{2, 0.2}, {4, 0.4}, {6, 0.6}, {6, 0.65}, {8, 0.8}})
    text += "{\"epoch\":1,\"batch\":" + std::to_string(batch) +
            ",\"batches_per_epoch\":8,\"train\":{\"accuracy\":" + std::to_string(accuracy) + "}}\n";
  const IntervalHistory points = parse_interval_history(text, "i");
  CHECK(points.positions == std::vector<double>{0.25, 0.5, 0.75, 1});
  CHECK(points.series.at("train.accuracy") == std::vector<double>{0.2, 0.4, 0.65, 0.8});
  // A run resumed from the epoch's start again drops every point after its first.
  const IntervalHistory again = parse_interval_history(
      text + "{\"epoch\":1,\"batch\":2,\"batches_per_epoch\":8,\"train\":{\"accuracy\":0.3}}\n",
      "i");
  CHECK(again.positions == std::vector<double>{0.25});
  CHECK(again.series.at("train.accuracy") == std::vector<double>{0.3});
}

TEST_CASE("bad interval lines are errors naming the file and line") {
  CHECK(mx::test::error_text([] {
          parse_interval_history("{\"epoch\":1,\"batch\":1}\nnope\n", "r/i.jsonl");
        }) == "r/i.jsonl:2: not a JSON line: 'nope'");
  CHECK(mx::test::error_text([] { parse_interval_history("{\"batch\":1}\n", "f"); }) ==
        "f:1: \"epoch\" is missing (expected a JSON object with \"epoch\" and \"batch\")");
  CHECK(mx::test::error_text([] { parse_interval_history("{\"epoch\":1,\"batch\":0}\n", "f"); }) ==
        "f:1: bad \"batch\" 0 (expected a whole number >= 1)");
  CHECK(mx::test::error_text([] {
          parse_interval_history("{\"epoch\":1,\"batch\":1,\"batches_per_epoch\":2.5}\n", "f");
        }) == "f:1: bad \"batches_per_epoch\" 2.5 (expected a whole number >= 1)");
  CHECK(mx::test::error_text([] {
          parse_interval_history("{\"epoch\":1,\"batch\":1,\"train\":{\"acc\":\"x\"}}\n", "f");
        }) == "f:1: \"train\".acc is not a number");
  CHECK(mx::test::error_text([] {
          parse_interval_history("{\"epoch\":1,\"batch\":1}\n{\"epoch\":1,", "f");
        }).find("f:2: the last line is cut short") == 0);
}

TEST_CASE("read_run_history reads intervals.jsonl when there is one") {
  test::TempDir dir("viz_intervals");
  std::ofstream(dir.file("metrics.jsonl")) << kThreeEpochs;
  CHECK(read_run_history(dir.path().string()).intervals.empty());
  std::ofstream(dir.file("intervals.jsonl")) << kIntervals;
  CHECK(read_run_history(dir.path().string()).intervals.positions.size() == 4);
  std::ofstream(dir.file("intervals.jsonl")) << "{\"epoch\":1}\n";
  CHECK(mx::test::error_text([&] { read_run_history(dir.path().string()); }) ==
        dir.file("intervals.jsonl") +
            ":1: \"batch\" is missing (expected a JSON object with \"epoch\" and \"batch\")");
}

TEST_CASE("a run's curves draw the interval points behind the train series") {
  RunHistory run = parse_run_history(kThreeEpochs, "m");
  run.intervals = parse_interval_history(kIntervals, "i");
  const Chart chart = run_curves_chart(run);
  REQUIRE(chart.panels.size() == 4);
  const Panel& accuracy = chart.panels[1];
  REQUIRE(accuracy.series.size() == 3);
  const Series& light = accuracy.series[0];  // drawn first: behind
  CHECK(light.name == "train (every 2 batches)");
  CHECK(light.color == accuracy.series[1].color);
  CHECK(light.opacity < 1);
  CHECK(light.width < accuracy.series[1].width);
  CHECK_FALSE(light.markers);
  REQUIRE(light.points.size() == 5);
  CHECK(std::isnan(light.points[2].y));  // a gap: the running metric restarts each epoch
  CHECK(light.points[3].x == doctest::Approx(1.5));
  CHECK(light.points[3].y == doctest::Approx(60));  // in percent as the epochs' points
  CHECK(data_range(accuracy).x_lo <= 0.5);
  const auto legend = legend_entries(accuracy);
  REQUIRE(legend.size() == 3);
  CHECK(legend[0].name == "train (every 2 batches)");
  CHECK(legend[0].opacity < 1);
  // Only train panels; the learning rate and the comparisons stay per epoch.
  CHECK(chart.panels[2].series.size() == 1);
  CHECK(compare_chart({run}, {"train.accuracy"}).panels[0].series.size() == 1);
}

TEST_CASE("a run's curves: a panel per metric, the learning rate, the best figure") {
  RunHistory run = parse_run_history(kThreeEpochs, "m");
  run.name = "lenet";
  const Chart chart = run_curves_chart(run);
  CHECK(chart.title == "Training run lenet");
  CHECK(chart.subtitle == "best validation accuracy 75.00% at epoch 2   (3 epochs)");
  REQUIRE(chart.panels.size() == 4);
  CHECK(chart.panels[0].title == "loss (cross-entropy)");  // the loss first
  CHECK(chart.panels[0].y_label == "cross-entropy (nats)");
  CHECK(chart.panels[1].title == "accuracy");
  CHECK(chart.panels[1].y_label == "accuracy (%)");
  CHECK(chart.panels[1].series[1].points[1].y == doctest::Approx(75));  // shown in percent
  CHECK(chart.panels[2].title == "learning rate");
  CHECK(chart.panels[3].title == "throughput");
  CHECK_FALSE(chart.panels[2].log_y);  // 0.1 to 0.02: linear
  // A rate that falls by decades is drawn on a log axis.
  run.series.at("learning_rate") = {0.1, 0.01, 0.001};
  CHECK(run_curves_chart(run).panels[2].log_y);
  CHECK(compare_chart({run}, {"learning_rate"}).panels[0].log_y);
  run.series.at("learning_rate") = {0.1, 0.0, 0.001};  // a zero cannot be on a log axis
  CHECK_FALSE(run_curves_chart(run).panels[2].log_y);
  const auto legend = legend_entries(chart.panels[0]);
  REQUIRE(legend.size() == 2);
  CHECK(legend[0].name == "train");
  CHECK(legend[1].name == "validation");
  CHECK(chart.panels[0].series[1].style == LineStyle::kDashed);
}

TEST_CASE("runs compared: a line per run, an unknown series lists the names there are") {
  RunHistory a = parse_run_history(kThreeEpochs, "a"), b = a;
  a.name = "lr0.1";
  b.name = "lr0.05";
  Chart chart = compare_chart({a, b}, {"val.accuracy"});
  REQUIRE(chart.panels.size() == 1);
  CHECK(chart.panels[0].title == "validation accuracy");
  const auto legend = legend_entries(chart.panels[0]);
  REQUIRE(legend.size() == 2);
  CHECK(legend[0].name == "lr0.1");
  CHECK(legend[1].name == "lr0.05");
  CHECK(legend[0].color != legend[1].color);
  // One legend for the chart, not one per panel.
  REQUIRE(chart.legend.size() == 2);
  CHECK(chart.legend[1].name == "lr0.05");
  CHECK_FALSE(chart.panels[0].show_legend);
  CHECK(chart.subtitle ==
        "lr0.1: best validation accuracy 75.00% (epoch 2)    lr0.05: best validation accuracy "
        "75.00% (epoch 2)");

  chart = compare_chart({a, b}, {});  // validation metrics and the learning rate
  REQUIRE(chart.panels.size() == 3);
  CHECK(chart.panels[0].title == "validation loss (cross-entropy)");
  CHECK(chart.panels[2].title == "learning rate");

  CHECK(mx::test::error_text([&] {
          compare_chart({a, b}, {"val.acc"});
        }) ==
        "no run has the series 'val.acc'; the runs have: learning_rate, samples_per_sec, "
        "seconds, train.accuracy, train.cross-entropy, val.accuracy, val.cross-entropy");
}

TEST_CASE("runs compared against training time: each point at the sum of the epochs' seconds") {
  RunHistory a = parse_run_history(kThreeEpochs, "a");
  a.path = "runs/a";
  const auto& seconds = a.series.at("seconds");
  const Chart chart = compare_chart({a}, {"val.accuracy"}, XAxis::kTime);
  REQUIRE(chart.panels.size() == 1);
  CHECK(chart.panels[0].x_label == "training time (s)");
  CHECK_FALSE(chart.panels[0].integer_x);
  const auto& points = chart.panels[0].series.at(0).points;
  REQUIRE(points.size() == seconds.size());
  double total = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    total += seconds[i];
    CHECK(points[i].x == doctest::Approx(total));
  }
  a.series.erase("seconds");
  CHECK(mx::test::error_text([&] { compare_chart({a}, {"val.accuracy"}, XAxis::kTime); }) ==
        "runs/a: metrics.jsonl has no epoch 'seconds' to draw against time");
}

TEST_CASE("network_dot: a box per layer with its parameters and shape, edges, clusters") {
  using graph::Symbol;
  Symbol x = Symbol::variable("data");
  Symbol h = Symbol::create("FullyConnected", "blk_fc1", {{"num_hidden", "8"}}, {x});
  h = Symbol::create("Activation", "blk_relu", {{"act_type", "relu"}}, {h});
  h = Symbol::create("FullyConnected", "blk_fc2", {{"num_hidden", "3"}}, {h});
  // Two layers sharing a prefix are not a block.
  h = Symbol::create("Activation", "tail_relu", {{"act_type", "relu"}}, {h});
  h = Symbol::create("Activation", "tail_tanh", {{"act_type", "tanh"}}, {h});
  Symbol out = Symbol::create("SoftmaxOutput", "softmax", {}, {h});
  NetworkPicture picture;
  picture.title = "small";
  picture.inputs = {"data", "softmax_label"};
  picture.shapes["data"] = Shape({4, 5});
  const std::string dot = network_dot(out, picture);
  CHECK(dot.rfind("digraph network {", 0) == 0);
  CHECK(dot.find("label=\"small\"") != std::string::npos);
  CHECK(dot.find("label=\"data\\n4×5\"") != std::string::npos);
  CHECK(dot.find("\"blk_fc1\\nFullyConnected: 8 units\\n→ 4×8\"") != std::string::npos);
  CHECK(dot.find("\"blk_relu\\nActivation: relu\\n→ 4×8\"") != std::string::npos);
  CHECK(dot.find("\"softmax\\nSoftmaxOutput\\n→ 4×3\"") != std::string::npos);
  CHECK(dot.find("softmax_label\\n4") != std::string::npos);
  // Parameters are not drawn.
  CHECK(dot.find("weight") == std::string::npos);
  CHECK(dot.find("bias") == std::string::npos);
  // data->fc1->relu->fc2->relu->tanh->softmax and the label: seven edges, labelled with shapes.
  CHECK(count(dot, " -> ") == 7);
  CHECK(dot.find("[label=\" 4×8\"]") != std::string::npos);
  // The three blk_ layers in one cluster, the softmax outside it.
  CHECK(count(dot, "subgraph cluster_") == 1);
  const size_t cluster = dot.find("label=\"blk\"");
  REQUIRE(cluster != std::string::npos);
  const size_t end = dot.find("  }\n", cluster);
  CHECK(count(dot.substr(cluster, end - cluster), "fillcolor") == 3);
  const size_t softmax = dot.find("\"softmax\\n");
  CHECK((softmax < cluster || softmax > end));
}

TEST_CASE("layer summaries name the key parameters") {
  CHECK(layer_summary("Convolution",
                      {{"kernel", "(3, 3)"}, {"stride", "(2, 2)"}, {"num_filter", "64"}}) ==
        "3x3/2, 64 filters");
  CHECK(layer_summary("Convolution",
                      {{"kernel", "[1,1]"}, {"stride", "[1,1]"}, {"num_filter", "8"}}) ==
        "1x1, 8 filters");
  CHECK(layer_summary("Pooling", {{"pool_type", "avg"}, {"global_pool", "True"}}) == "global avg");
  CHECK(layer_summary("Pooling", {{"kernel", "(2, 2)"}, {"stride", "(2, 1)"}}) == "max 2x2/2x1");
  CHECK(layer_summary("Dropout", {{"p", "0.2"}}) == "p 0.2");
  CHECK(layer_summary("BatchNorm", {{"fix_gamma", "False"}}) == "");
}

TEST_CASE("picture formats by extension") {
  CHECK(image_format("a/b.PNG", "x", false) == ImageFormat::kPng);
  CHECK(image_format("b.svg", "x", true) == ImageFormat::kSvg);
  CHECK(image_format("b.dot", "x", true) == ImageFormat::kDot);
  CHECK(mx::test::error_text([] { image_format("c.jpg", "-o", false); }) ==
        "-o 'c.jpg': unknown picture format '.jpg'; give a file name ending in .png, .svg");
  CHECK_THROWS_AS(image_format("c.dot", "-o", false), InputError);
  CHECK_THROWS_AS(image_format("noext", "-o", true), InputError);
}

TEST_CASE("charts are written as PNG and SVG, whole") {
  if (!charts_available()) {
    MESSAGE("built without Cairo: chart files not checked");
    CHECK_THROWS_AS(render_chart(Chart{}, "x.png"), Error);
    return;
  }
  test::TempDir dir("viz_render");
  RunHistory run = parse_run_history(kThreeEpochs, "m");
  run.intervals = parse_interval_history(kIntervals, "i");
  run.name = "run<1>";
  const Chart chart = run_curves_chart(run);
  render_chart(chart, dir.file("c.png"));
  render_chart(chart, dir.file("c.svg"));
  const std::string png = read_all(dir.file("c.png"));
  REQUIRE(png.size() > 8);
  CHECK(png.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0);
  // The width and height in the IHDR chunk.
  auto be32 = [&](size_t at) {
    return (static_cast<unsigned char>(png[at]) << 24) |
           (static_cast<unsigned char>(png[at + 1]) << 16) |
           (static_cast<unsigned char>(png[at + 2]) << 8) | static_cast<unsigned char>(png[at + 3]);
  };
  CHECK(be32(16) == static_cast<unsigned>(chart.width));
  CHECK(be32(20) > static_cast<unsigned>(2 * chart.panel_height));  // two rows of panels
  const std::string svg = read_all(dir.file("c.svg"));
  CHECK(svg.find("<svg") != std::string::npos);
  CHECK(svg.find("</svg>") != std::string::npos);
  CHECK(svg.find("<title>Training run run&lt;1&gt;</title>") != std::string::npos);
  CHECK(svg.find("validation") != std::string::npos);
  CHECK(svg.find("learning rate") != std::string::npos);
  // The interval points' light line (Cairo writes a style or an attribute).
  CHECK((svg.find("opacity:0.45") != std::string::npos ||
         svg.find("opacity=\"0.45\"") != std::string::npos));
  // No temporary file left behind.
  CHECK(std::distance(std::filesystem::directory_iterator(dir.path()),
                      std::filesystem::directory_iterator()) == 2);
  CHECK_THROWS_AS(render_chart(chart, dir.file("c.gif")), InputError);
  CHECK_THROWS_AS(render_chart(chart, dir.file("missing/c.png")), Error);
}

TEST_CASE("graphs are written as dot text, SVG and PNG") {
  test::TempDir dir("viz_graph");
  const std::string dot = "digraph g { a [label=\"conv1\"]; a -> b; }\n";
  render_dot(dot, dir.file("g.dot"));
  CHECK(read_all(dir.file("g.dot")) == dot);
  CHECK_THROWS_AS(render_dot(dot, dir.file("g.pdf")), InputError);
  if (!graphs_available()) {
    MESSAGE("built without Graphviz: only .dot checked");
    CHECK_THROWS_AS(render_dot(dot, dir.file("g.svg")), Error);
    return;
  }
  render_dot(dot, dir.file("g.svg"));
  render_dot(dot, dir.file("g.png"));
  const std::string svg = read_all(dir.file("g.svg"));
  CHECK(svg.find("<svg") != std::string::npos);
  CHECK(svg.find(">conv1</text>") != std::string::npos);
  CHECK(read_all(dir.file("g.png")).compare(0, 8, "\x89PNG\r\n\x1a\n") == 0);
  std::string message;
  try {
    render_dot("digraph { a -> ", dir.file("bad.svg"));
  } catch (const Error& e) {
    message = e.what();
  }
  CHECK(message.find("bad.svg': Graphviz could not read the graph: ") != std::string::npos);
  CHECK(message.find("syntax error") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("bad.svg")));
}

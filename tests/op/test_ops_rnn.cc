// The RNN operator: gradients against finite differences for every mode and
// feature (layers, directions, state outputs, sequence lengths, projection,
// cell clipping), forward values and gradients against MXNet 1.9.1
// (tests/fixtures/ops/rnn.*) and, for what MXNet refuses on the CPU, against
// PyTorch (rnn_torch.*), oneDNN's primitives against the reference kernels
// (op/dnnl/dnnl_rnn.h), the flat parameter layout, shape inference and the
// messages of bad parameters.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "op/invoke.h"
#include "op/nn/rnn_param.h"
#include "op/registry.h"
#include "op/resources.h"
#include "op_harness.h"

using namespace mx;
using namespace mx::test;
using op::AttrMap;
using op::OpInstance;
using op::ShapeVector;

namespace {

// Input shapes of an RNN call: data, parameters, state (and state_cell).
std::vector<Shape> rnn_shapes(const AttrMap& attrs, int64_t T, int64_t N, int64_t I) {
  const auto p = op::RnnParam::from_strings(attrs, "RNN");
  const op::RnnGeometry g(p, T, N, I);
  std::vector<Shape> shapes{Shape{T, N, I}, Shape{g.parameter_count()}, Shape{g.states(), N, g.P}};
  if (p.lstm()) shapes.push_back(Shape{g.states(), N, g.H});
  if (p.use_sequence_length) shapes.push_back(Shape{N});
  return shapes;
}

AttrMap with(AttrMap attrs, const std::string& key, const std::string& value) {
  attrs[key] = value;
  return attrs;
}

ShapeVector infer_out(const AttrMap& attrs, ShapeVector& in) {
  OpInstance inst("RNN", attrs, "RNN 'rnn'");
  ShapeVector aux, out(inst.output_names().size());
  inst.infer_shape(in, aux, out);
  return out;
}

}  // namespace

TEST_CASE("gradients: RNN modes, layers and directions") {
  for (const char* mode : {"lstm", "gru", "rnn_tanh", "rnn_relu"}) {
    CAPTURE(mode);
    const AttrMap one{{"mode", mode}, {"state_size", "3"}, {"num_layers", "1"}};
    GradientCheckOptions o;
    o.min_abs = 0.05;  // keep relu's kink away from the perturbations
    check_gradient("RNN", one, rnn_shapes(one, 3, 2, 4), o);
    const AttrMap deep =
        with(with(with(one, "num_layers", "2"), "bidirectional", "True"), "state_outputs", "True");
    check_gradient("RNN", deep, rnn_shapes(deep, 3, 2, 3), o);
  }
}

TEST_CASE("gradients: RNN sequence lengths, projection and cell clipping") {
  const AttrMap lstm{{"mode", "lstm"},
                     {"state_size", "3"},
                     {"num_layers", "2"},
                     {"bidirectional", "True"},
                     {"state_outputs", "True"}};
  GradientCheckOptions lengths;
  lengths.integer_inputs = {4};
  lengths.integer_range = 5;  // lengths 0..4 of 4 steps
  lengths.skip_inputs = {4};
  for (const char* mode : {"lstm", "gru", "rnn_tanh"}) {
    CAPTURE(mode);
    const AttrMap a = with(with(lstm, "mode", mode), "use_sequence_length", "True");
    check_gradient("RNN", a, rnn_shapes(a, 4, 3, 2), lengths);
  }
  const AttrMap proj = with(lstm, "projection_size", "2");
  check_gradient("RNN", proj, rnn_shapes(proj, 3, 2, 4));
  const AttrMap proj_lengths = with(proj, "use_sequence_length", "True");
  check_gradient("RNN", proj_lengths, rnn_shapes(proj_lengths, 4, 3, 2), lengths);
  // A range that the cell states of random inputs cross: both sides checked.
  const AttrMap clipped =
      with(with(lstm, "lstm_state_clip_min", "-0.3"), "lstm_state_clip_max", "0.35");
  GradientCheckOptions clip;
  clip.step = 1e-7;  // few cells sit within a step of the bounds
  check_gradient("RNN", clipped, rnn_shapes(clipped, 3, 2, 3), clip);
}

TEST_CASE("RNN on oneDNN against the reference kernels: modes, layers, directions, dropout") {
  // check_implementations runs both CPU implementations in float32 on the
  // same inputs: outputs, and every gradient for req write and then add
  // (oneDNN's second backward pass runs its forward pass again). Sizes in
  // the vectors' widths; input size below, at and above the state size
  // (oneDNN stacks layers of equal widths in one primitive, the first
  // layer of another width alone).
  struct Case {
    int64_t layers;
    bool bidirectional;
    int64_t input, state;
  };
  // Inputs and weights in [-0.5, 0.5]: ReLU layers of 16 to 24 inputs grow
  // their values step after step, and rounding (oneDNN's sums in another
  // order) with them.
  GradientCheckOptions o;
  o.low = -0.5;
  o.high = 0.5;
  const Case cases[] = {{1, false, 8, 16},  {1, false, 16, 16}, {2, false, 8, 16},
                        {3, false, 16, 16}, {3, false, 24, 16}, {1, true, 8, 16},
                        {2, true, 16, 16},  {3, true, 8, 8}};
  for (const char* mode : {"lstm", "gru", "rnn_tanh", "rnn_relu"})
    for (const Case& c : cases) {
      INFO(std::string(mode), ", ", c.layers, " layer(s), bidirectional ", c.bidirectional,
           ", input ", c.input, ", state ", c.state);
      const AttrMap a{{"mode", mode},
                      {"state_size", std::to_string(c.state)},
                      {"num_layers", std::to_string(c.layers)},
                      {"bidirectional", c.bidirectional ? "True" : "False"},
                      {"state_outputs", c.layers == 2 ? "False" : "True"}};
      check_implementations("RNN", a, rnn_shapes(a, 6, 5, c.input), o);
    }
  // One step of one sequence (text generation's calls).
  for (const char* mode : {"lstm", "gru"}) {
    INFO(std::string(mode), ", one step, one sequence");
    const AttrMap a{{"mode", mode}, {"state_size", "16"}, {"num_layers", "2"}};
    check_implementations("RNN", a, rnn_shapes(a, 1, 1, 8), o);
  }
}

TEST_CASE("RNN on oneDNN against the reference kernels: dropout, inference, projection") {
  // Inputs and weights in [-0.5, 0.5], as above: a bidirectional ReLU stack
  // with dropout's 1/(1-p) scaling grows its values fastest, and on an Intel
  // CPU (oneDNN's AVX-512 FP16-capable kernels) the summation order put its
  // parameter gradients at 1.2-1.9 times the tolerance with inputs in [-1, 1].
  GradientCheckOptions training;
  training.low = -0.5;
  training.high = 0.5;
  for (const char* mode : {"lstm", "gru", "rnn_relu"})
    for (const char* bidirectional : {"False", "True"}) {
      INFO(std::string(mode), ", bidirectional ", std::string(bidirectional));
      // Dropout between layers: one primitive per layer, the harness's
      // generator seeded alike for both, so both draw the same masks.
      const AttrMap a{{"mode", mode},      {"state_size", "16"},
                      {"num_layers", "3"}, {"bidirectional", bidirectional},
                      {"p", "0.4"},        {"state_outputs", "True"}};
      check_implementations("RNN", a, rnn_shapes(a, 5, 4, 8), training);
      // Inference: oneDNN's inference primitives (the backward pass after
      // it runs the training pass first).
      GradientCheckOptions inference = training;
      inference.is_train = false;
      check_implementations("RNN", with(a, "p", "0"), rnn_shapes(a, 5, 4, 8), inference);
    }
  // LSTM with a projection (LSTMP), which oneDNN trains too.
  for (const char* layers : {"1", "3"})
    for (const char* bidirectional : {"False", "True"}) {
      INFO(std::string(layers), " layer(s), bidirectional ", std::string(bidirectional));
      const AttrMap a{{"mode", "lstm"},         {"state_size", "16"},
                      {"num_layers", layers},   {"bidirectional", bidirectional},
                      {"projection_size", "8"}, {"state_outputs", "True"}};
      check_implementations("RNN", a, rnn_shapes(a, 5, 4, 8));
      check_implementations("RNN", a, rnn_shapes(a, 5, 4, 12));
    }
}

// The GPU kernels against the CPU at a character model's widths and lengths
// (the char-LSTM of configs/charlstm-fortunes.yaml among them), every mode,
// in training and in inference (where dropout is off). The family's other
// cases are small; long recurrences are where sums in another order show.
// It runs where there is a harness device: test_ops_gpu on a GPU machine
// (its name puts it among the harness's cases there), and
// test_ops_device_harness_cpu (cpu:1) everywhere.
TEST_CASE("gradients: RNN on the harness device at a character model's widths") {
  if (harness_device().is_gpu() && !gpu_present()) {
    MESSAGE(
        "no GPU: these cases run in test_ops_gpu on a GPU machine and against cpu:1 in "
        "test_ops_device_harness_cpu");
    return;
  }
  struct Case {
    const char* mode;
    int64_t layers;
    bool bidirectional;
    int64_t steps, batch, input, state;
  };
  const Case cases[] = {{"lstm", 2, false, 64, 32, 64, 256},
                        {"gru", 2, true, 32, 16, 32, 128},
                        {"rnn_tanh", 2, true, 16, 8, 16, 64},
                        {"rnn_relu", 1, false, 16, 8, 16, 64},
                        {"lstm", 3, true, 8, 4, 12, 16}};
  for (const Case& c : cases) {
    INFO(std::string(c.mode), ", ", c.layers, " layer(s), bidirectional ", c.bidirectional, ", ",
         c.steps, " steps of ", c.batch, ", input ", c.input, ", state ", c.state);
    // Values in [-s, s] with s = 0.87 / sqrt(state): the recurrent matrices'
    // spectral radius near 0.5, so that rounding differences (the GPU sums in
    // another order) fade over the steps instead of growing chaotically as
    // they do in a random network of wide layers and large weights.
    GradientCheckOptions o;
    o.high = 0.87 / std::sqrt(static_cast<double>(c.state));
    o.low = -o.high;
    o.rtol = 1e-3;  // long sums in another order than the CPU's
    const AttrMap a{{"mode", c.mode},
                    {"state_size", std::to_string(c.state)},
                    {"num_layers", std::to_string(c.layers)},
                    {"bidirectional", c.bidirectional ? "True" : "False"},
                    {"state_outputs", "True"}};
    check_device("RNN", a, rnn_shapes(a, c.steps, c.batch, c.input), harness_device(), o);
    // Inference with dropout, which only training applies.
    GradientCheckOptions inference = o;
    inference.is_train = false;
    check_device("RNN", with(a, "p", "0.3"), rnn_shapes(a, c.steps, c.batch, c.input),
                 harness_device(), inference);
  }
}

TEST_CASE("reference: RNN against MXNet 1.9.1") {
  const auto cases = load_reference_cases("rnn");
  CHECK(cases.size() >= 10);
  for (const auto& c : cases) check_reference(c, 1e-4, 2e-5);
}

TEST_CASE("reference: RNN sequence lengths and projection against PyTorch") {
  const auto cases = load_reference_cases("rnn_torch");
  CHECK(cases.size() >= 7);
  for (const auto& c : cases) check_reference(c, 1e-4, 2e-5);
}

TEST_CASE("RNN's flat parameter vector has MXNet's size for every mode") {
  // Sizes MXNet 1.9.1 infers (mx.sym.RNN(...).infer_shape).
  auto count = [](AttrMap a, int64_t input) {
    return op::RnnParam::from_strings(a, "RNN").parameter_count(input);
  };
  const AttrMap bi{
      {"mode", "lstm"}, {"state_size", "4"}, {"num_layers", "2"}, {"bidirectional", "True"}};
  CHECK(count(bi, 6) == 832);
  CHECK(count(with(bi, "mode", "gru"), 6) == 624);
  CHECK(count(with(bi, "mode", "rnn_tanh"), 6) == 208);
  CHECK(
      count({{"mode", "lstm"}, {"state_size", "4"}, {"num_layers", "1"}, {"projection_size", "2"}},
            6) == 168);
  // (I + H + 2) * G * H * D + (L - 1) * (D * H + H + 2) * G * H * D.
  CHECK(count({{"mode", "gru"}, {"state_size", "256"}, {"num_layers", "3"}}, 64) ==
        (64 + 256 + 2) * 3 * 256 + 2 * (256 + 256 + 2) * 3 * 256);
}

TEST_CASE("RNN infers states and outputs from the data, and names what does not fit") {
  const AttrMap a{{"mode", "lstm"},
                  {"state_size", "5"},
                  {"num_layers", "2"},
                  {"bidirectional", "True"},
                  {"state_outputs", "True"}};
  ShapeVector in{Shape{7, 3, 4}, Shape(), Shape(), Shape()};
  const ShapeVector out = infer_out(a, in);
  CHECK(in[1] == Shape{op::RnnParam::from_strings(a, "RNN").parameter_count(4)});
  CHECK(in[2] == Shape{4, 3, 5});
  CHECK(in[3] == Shape{4, 3, 5});
  CHECK(out[0] == Shape{7, 3, 10});
  CHECK(out[1] == Shape{4, 3, 5});
  CHECK(out[2] == Shape{4, 3, 5});
  CHECK(OpInstance("RNN", a, "RNN 'rnn'").num_visible_outputs() == 3);

  // Begin states with a batch of 0 (Gluon's exported _zeros) take the data's.
  ShapeVector partial{Shape{7, 3, 4}, Shape(), Shape{4, -1, 5}, Shape()};
  infer_out(a, partial);
  CHECK(partial[2] == Shape{4, 3, 5});

  ShapeVector wrong_params{Shape{7, 3, 4}, Shape{10}, Shape(), Shape()};
  CHECK_THROWS_WITH_AS(infer_out(a, wrong_params),
                       doctest::Contains("input 'parameters' (2 layer(s) of 5 units, "
                                         "bidirectional, input size 4)"),
                       InputError);
  ShapeVector wrong_state{Shape{7, 3, 4}, Shape(), Shape{2, 3, 5}, Shape()};
  CHECK_THROWS_WITH_AS(infer_out(a, wrong_state), doctest::Contains("input 'state'"), InputError);
  ShapeVector flat{Shape{7, 12}, Shape(), Shape(), Shape()};
  CHECK_THROWS_WITH_AS(infer_out(a, flat), doctest::Contains("TNC"), InputError);
}

TEST_CASE("RNN's parameters are checked together") {
  auto parse = [](const AttrMap& a) { return op::RnnParam::from_strings(a, "RNN 'rnn'"); };
  const AttrMap gru{{"mode", "gru"}, {"state_size", "4"}, {"num_layers", "1"}};
  CHECK_THROWS_WITH_AS(parse(with(gru, "projection_size", "2")),
                       "RNN 'rnn': projection_size is for mode 'lstm' only", InputError);
  const AttrMap lstm = with(gru, "mode", "lstm");
  CHECK_THROWS_WITH_AS(parse(with(lstm, "projection_size", "4")),
                       doctest::Contains("must be smaller than state_size"), InputError);
  CHECK_THROWS_WITH_AS(parse(with(lstm, "lstm_state_clip_min", "-1")),
                       doctest::Contains("give both"), InputError);
  CHECK_THROWS_WITH_AS(
      parse(with(with(lstm, "lstm_state_clip_min", "1"), "lstm_state_clip_max", "-1")),
      doctest::Contains("is above"), InputError);
  CHECK_THROWS_WITH_AS(parse(with(gru, "mode", "lstmm")), doctest::Contains("lstm"), InputError);
  // MXNet's JSON spells absent optional values "None".
  CHECK_FALSE(parse(with(lstm, "projection_size", "None")).projection_size.has_value());
}

TEST_CASE("RNN cell clipping bounds the cell states and sequence lengths hold the states") {
  const AttrMap a{{"mode", "lstm"},
                  {"state_size", "3"},
                  {"num_layers", "1"},
                  {"state_outputs", "True"},
                  {"lstm_state_clip_min", "-0.1"},
                  {"lstm_state_clip_max", "0.1"},
                  {"use_sequence_length", "True"}};
  const auto shapes = rnn_shapes(a, 5, 2, 2);
  std::vector<NDArray> inputs;
  for (size_t i = 0; i < shapes.size(); ++i)
    inputs.push_back(NDArray::full(shapes[i], i == 4 ? 0.0 : 0.9));
  inputs[4] = NDArray::from_vector<float>(Shape{2}, {5, 2});
  OpInstance inst("RNN", a, "RNN 'rnn'");
  const auto outs = op::invoke(inst, inputs);
  for (float c : outs[2].to_vector<float>()) CHECK(std::abs(c) <= 0.1f + 1e-7f);
  // Sequence 1 stops after 2 steps: zero outputs after, its final state is step 1's output.
  const auto y = outs[0].to_vector<float>();
  const auto hy = outs[1].to_vector<float>();
  for (int t = 2; t < 5; ++t)
    for (int j = 0; j < 3; ++j) CHECK(y[static_cast<size_t>((t * 2 + 1) * 3 + j)] == 0.0f);
  for (int j = 0; j < 3; ++j) {
    CHECK(hy[static_cast<size_t>(3 + j)] == y[static_cast<size_t>((1 * 2 + 1) * 3 + j)]);
    CHECK(hy[static_cast<size_t>(j)] == y[static_cast<size_t>((4 * 2 + 0) * 3 + j)]);
  }
}

TEST_CASE("RNN dropout between layers: masks in training only, and the gradient follows them") {
  const AttrMap a{{"mode", "rnn_tanh"}, {"state_size", "4"}, {"num_layers", "2"}, {"p", "0.5"}};
  const auto shapes = rnn_shapes(a, 6, 8, 4);
  std::vector<NDArray> inputs;
  for (size_t i = 0; i < shapes.size(); ++i) inputs.push_back(NDArray::full(shapes[i], 0.3));
  OpInstance inst("RNN", a, "RNN 'rnn'");
  const auto infer = op::invoke(inst, inputs, {}, false);
  const auto again = op::invoke(inst, inputs, {}, false);
  CHECK(infer[0].to_vector<float>() == again[0].to_vector<float>());
  const auto train = op::invoke(inst, inputs, {}, true);
  CHECK(train[0].to_vector<float>() != infer[0].to_vector<float>());
  // The same weights with p = 0 give the inference values.
  OpInstance plain("RNN", with(a, "p", "0"), "RNN 'rnn'");
  CHECK(op::invoke(plain, inputs, {}, true)[0].to_vector<float>() == infer[0].to_vector<float>());
}

TEST_CASE("RNN dropout's gradient goes through the masks of its forward pass") {
  // The same masks in every forward pass (the generator reseeded), so
  // central differences of the data see the function the backward pass
  // differentiates.
  const AttrMap a{{"mode", "gru"}, {"state_size", "3"}, {"num_layers", "3"}, {"p", "0.4"}};
  const auto shapes = rnn_shapes(a, 3, 2, 2);
  std::vector<NDArray> inputs;
  for (size_t i = 0; i < shapes.size(); ++i) {
    std::vector<double> v(static_cast<size_t>(shapes[i].size()));
    for (size_t k = 0; k < v.size(); ++k) v[k] = std::sin(1.7 * static_cast<double>(k + 31 * i));
    inputs.push_back(NDArray::from_vector<double>(shapes[i], v));
  }
  OpInstance inst("RNN", a, "RNN 'rnn'");
  auto forward = [&](const std::vector<NDArray>& in) {
    op::ResourceManager::get().seed(5);
    return op::invoke(inst, in, {}, true);
  };
  const auto outs = forward(inputs);
  NDArray weights = NDArray::full(outs[0].shape(), 1.0, Context::cpu(), DType::kFloat64);
  std::vector<NDArray> grads;
  for (const auto& x : inputs)
    grads.push_back(NDArray::zeros(x.shape(), Context::cpu(), DType::kFloat64));
  op::invoke_backward(inst, {weights}, inputs, outs, {}, grads,
                      std::vector<op::OpReq>(inputs.size(), op::OpReq::kWrite));
  const auto analytic = grads[0].to_vector<double>();
  auto loss = [&](std::vector<NDArray> in) {
    double sum = 0;
    for (double y : forward(in)[0].to_vector<double>()) sum += y;
    return sum;
  };
  const std::vector<double> x = inputs[0].to_vector<double>();
  int nonzero = 0;
  for (size_t k = 0; k < x.size(); ++k) {
    std::vector<double> up = x, down = x;
    up[k] += 1e-6;
    down[k] -= 1e-6;
    auto in_up = inputs, in_down = inputs;
    in_up[0] = NDArray::from_vector<double>(shapes[0], up);
    in_down[0] = NDArray::from_vector<double>(shapes[0], down);
    const double numeric = (loss(in_up) - loss(in_down)) / 2e-6;
    CHECK(analytic[k] == doctest::Approx(numeric).epsilon(1e-5));
    nonzero += analytic[k] != 0;
  }
  CHECK(nonzero > 0);
}

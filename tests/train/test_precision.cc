// train.precision: parsing and its errors, the refusal of what this machine
// cannot run fast (with injected CPU features), and a bfloat16 run end to
// end: float32 checkpoints that resume exactly.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "base/error.h"
#include "error_text.h"
#include "graph/node.h"
#include "ndarray/params_io.h"
#include "op/dnnl/dnnl_switch.h"
#include "temp_dir.h"
#include "train/config.h"
#include "train/precision.h"
#include "train/train_settings.h"
#include "train/trainer.h"

using namespace mx;
using namespace mx::train;

namespace {

// A small convolutional net on synthetic images (Convolution and
// FullyConnected run in bfloat16, the loss in float32).
const char* kConfig = R"(network:
  layers:
    - {op: Convolution, name: conv, kernel: [3, 3], num_filter: 8}
    - {op: Activation, name: act, act_type: relu}
    - {op: Pooling, name: pool, kernel: [2, 2], stride: [2, 2], pool_type: max}
    - {op: Flatten, name: flat}
    - {op: FullyConnected, name: fc, num_hidden: 4}
    - {op: SoftmaxOutput, name: softmax}
data:
  train: {type: synthetic, data_shape: [1, 8, 8], num_batches: 4, num_classes: 4}
optimizer: {type: sgd, learning_rate: 0.1, momentum: 0.9}
train: {batch_size: 8, seed: 5, log_interval: 100,
        precision: bfloat16}
)";

Config config(std::vector<std::string> overrides) {
  return Config::from_string(kConfig, "test.yaml", overrides);
}

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

const CpuFeatures kFull{true, true};

}  // namespace

TEST_CASE("train.precision is float32, bfloat16 or float16") {
  CHECK(parse_train_precision("float32", "x") == Precision::kFloat32);
  CHECK(parse_train_precision("bfloat16", "x") == Precision::kBFloat16);
  CHECK(parse_train_precision("float16", "x") == Precision::kFloat16);
  CHECK(test::error_text([] { parse_train_precision("bf16", "cfg.yaml:3:14"); }) ==
        "cfg.yaml:3:14: train.precision must be float32, bfloat16 or float16, not 'bf16'");
  CHECK(parse_train_settings(config({}), kFull).precision == Precision::kBFloat16);
  CHECK(parse_train_settings(config({"train.precision=float32"}), {}).precision ==
        Precision::kFloat32);
  // The config file's place in the message.
  CHECK(test::error_text([] {
          parse_train_settings(config({"train.precision=half"}), kFull);
        }).find("train.precision must be") != std::string::npos);
}

TEST_CASE("a precision this machine cannot run fast is refused, naming the missing feature") {
  const std::string no_bf16 = test::error_text([] {
    parse_train_settings(config({}), CpuFeatures{true, false});
  });
  CHECK(
      no_bf16 ==
      "test.yaml:13:20: train.precision bfloat16 needs a CPU with bfloat16 instructions: this CPU "
      "lacks avx512_bf16 (AVX512-BF16 or AMX); train in float32");
  CHECK(test::error_text([] {
          parse_train_settings(config({}), CpuFeatures{false, true});
        }).find("needs mx's oneDNN kernels") != std::string::npos);
  CHECK(test::error_text([] {
          parse_train_settings(config({"train.precision=float16"}), kFull);
        }).find("runs on GPUs only; on the CPU train in bfloat16") != std::string::npos);
  // On GPUs: float16 needs tensor cores (7.0), bfloat16 compute capability 8.0.
  auto volta = [](int) { return 70; };
  auto hopper = [](int) { return 90; };
  check_precision_supported(Precision::kFloat16, {Context::gpu(0)}, CpuFeatures{}, "here", volta);
  check_precision_supported(Precision::kBFloat16, {Context::gpu(0), Context::gpu(1)}, CpuFeatures{},
                            "here", hopper);
  CHECK(test::error_text([&] {
          check_precision_supported(Precision::kBFloat16, {Context::gpu(0)}, kFull, "here", volta);
        }) ==
        "here: train.precision bfloat16 needs a GPU of compute capability 8.0 or later; "
        "gpu:0 has 7.0; train in float32 there");
  CHECK(test::error_text([] {
          check_precision_supported(Precision::kFloat16, {Context::gpu(0)}, kFull, "here",
                                    [](int) { return 61; });
        }).find("needs a GPU of compute capability 7.0 or later; gpu:0 has 6.1") !=
        std::string::npos);
  // A CPU among the devices still needs what the CPU needs.
  CHECK(test::error_text([&] {
          check_precision_supported(Precision::kFloat16, {Context::gpu(0), Context::cpu()}, kFull,
                                    "here", hopper);
        }).find("runs on GPUs only") != std::string::npos);
  // float32 needs nothing.
  check_precision_supported(Precision::kFloat32, {Context::cpu()}, CpuFeatures{}, "here");
}

// RNN declares float32 for the CPU (its bfloat16 kernels are slower there
// than its float32 ones): a run with any CPU among its devices keeps it.
TEST_CASE("apply_precision takes the CPU's AMP classes when a device is the CPU") {
  using graph::Symbol;
  const Symbol rnn =
      Symbol::create("RNN", "lstm", {{"mode", "lstm"}, {"state_size", "4"}, {"num_layers", "1"}},
                     {Symbol::variable("data"), Symbol::variable("params"), Symbol::variable("h0"),
                      Symbol::variable("c0")});
  // Whether the converted network casts the RNN's data input.
  auto rnn_cast = [&](const std::vector<Context>& devices) {
    const Symbol amp = train::apply_precision(rnn, train::Precision::kBFloat16, devices);
    for (const auto& n : graph::topo_order(amp.outputs()))
      if (n->name == "lstm") return !n->inputs[0].node->is_variable();
    FAIL("no node lstm");
    return false;
  };
  CHECK(rnn_cast({Context::gpu(0)}));
  CHECK(rnn_cast({Context::gpu(0), Context::gpu(1)}));
  CHECK_FALSE(rnn_cast({Context::cpu()}));
  CHECK_FALSE(rnn_cast({Context::gpu(0), Context::cpu()}));
}

TEST_CASE("a bfloat16 run checkpoints float32 parameters and resumes exactly") {
  if (!op::dnnl_bf16_available()) {
    MESSAGE("no bfloat16 instructions on this CPU: skipped");
    return;
  }
  test::TempDir dir("precision");
  const std::string whole = dir.file("whole"), split = dir.file("split");
  auto train = [](const Config& c, TrainOptions o) {
    Trainer t(c, std::move(o));
    t.train();
  };
  train(config({"train.epochs=2"}), {"test", "", whole, false});
  train(config({"train.epochs=1"}), {"test", "", split, false});
  train(config({"train.epochs=2"}), {"test", split, "", false});
  const std::string a = read(whole + "/model-0002.params");
  CHECK(!a.empty());
  CHECK(a == read(split + "/model-0002.params"));
  const NamedArrays saved = load_params(whole + "/model-0002.params");
  REQUIRE(!saved.arrays.empty());
  for (size_t i = 0; i < saved.arrays.size(); ++i) {
    CAPTURE(saved.names[i]);
    CHECK(saved.arrays[i].dtype() == DType::kFloat32);
  }
  // The saved symbol is the float32 network, without the AMP casts.
  CHECK(read(whole + "/model-symbol.json").find("amp_cast") == std::string::npos);
}

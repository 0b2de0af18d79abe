// The network language's SelfAttention layer and the GPT transformer block
// of configs/chargpt-fortunes.yaml: their graphs against a straightforward
// composition written here with loops (float64) and against a one-layer GPT
// built and run by MXNet 1.9.1 (tests/fixtures/graph/chargpt-*), finite-
// difference gradients of the whole layer, causality, MXNet's operators only
// (the symbol JSON round trip), and the errors a config gets before any data
// is read.
#include <doctest/doctest.h>

#include <cmath>
#include <set>

#include "base/error.h"
#include "executor/executor.h"
#include "graph/symbol.h"
#include "ndarray/params_io.h"
#include "train/network_yaml.h"
#include "train/train_settings.h"
#include "train/trainer_setup.h"

using namespace mx;
using namespace mx::train;

namespace {

graph::Symbol build(const std::string& text, LayerOrigins* origins = nullptr) {
  return build_network(YAML::Load(text), "net.yaml", origins);
}

std::string error_of(const std::string& text) {
  try {
    build(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

using Values = std::vector<double>;

// Deterministic values in [-scale, scale): a fixed pseudo-random sequence.
Values values_for(const std::string& name, int64_t n, double scale = 0.5) {
  Values v(static_cast<size_t>(n));
  uint64_t h = std::hash<std::string>{}(name) | 1;
  for (auto& x : v) {
    h = h * 6364136223846793005ull + 1442695040888963407ull;
    x = scale * (static_cast<double>(h >> 11) / 9007199254740992.0 * 2 - 1);
  }
  return v;
}

// The network bound in float64 with every argument filled by values_for;
// LayerNorm gains near 1.
std::unique_ptr<Executor> bind64(const graph::Symbol& net, const Shape& data) {
  BindOptions options;
  for (const auto& a : net.list_arguments()) options.dtypes[a] = DType::kFloat64;
  auto exe = Executor::simple_bind(net, {{"data", data}}, options);
  for (const auto& [name, array] : exe->arg_dict()) {
    Values v = values_for(name, array.shape().size());
    if (name.size() > 6 && name.substr(name.size() - 6) == "_gamma")
      for (auto& x : v) x += 1;
    NDArray::from_vector<double>(array.shape(), v).copy_to(const_cast<NDArray&>(array));
  }
  return exe;
}

Values arg(const Executor& exe, const std::string& name) {
  return exe.arg_dict().at(name).to_vector<double>();
}

// ---- the reference, with loops --------------------------------------------

// y (rows, out) = x (rows, in) W^T + b, W (out, in).
Values linear(const Values& x, const Values& w, const Values& b, int64_t in, int64_t out) {
  const int64_t rows = static_cast<int64_t>(x.size()) / in;
  Values y(static_cast<size_t>(rows * out));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < out; ++o) {
      double s = b[static_cast<size_t>(o)];
      for (int64_t i = 0; i < in; ++i)
        s += x[static_cast<size_t>(r * in + i)] * w[static_cast<size_t>(o * in + i)];
      y[static_cast<size_t>(r * out + o)] = s;
    }
  return y;
}

// Multi-head self-attention on x (T, N, C) in the interleaved layout: the
// projection's features for head h are (query, key, value) x d at h*3*d.
Values attention(const Executor& exe, const std::string& layer, const Values& x, int64_t T,
                 int64_t N, int64_t C, int64_t heads, bool causal) {
  const int64_t d = C / heads;
  const Values qkv =
      linear(x, arg(exe, layer + "_qkv_weight"), arg(exe, layer + "_qkv_bias"), C, 3 * C);
  auto at = [&](int64_t t, int64_t n, int64_t h, int64_t which, int64_t i) {
    return qkv[static_cast<size_t>((t * N + n) * 3 * C + h * 3 * d + which * d + i)];
  };
  Values context(static_cast<size_t>(T * N * C));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t t = 0; t < T; ++t) {
        const int64_t keys = causal ? t + 1 : T;  // later keys are masked out
        Values w(static_cast<size_t>(keys));
        double top = -1e300, sum = 0;
        for (int64_t s = 0; s < keys; ++s) {
          double dot = 0;
          for (int64_t i = 0; i < d; ++i) dot += at(t, n, h, 0, i) * at(s, n, h, 1, i);
          w[static_cast<size_t>(s)] = dot / std::sqrt(static_cast<double>(d));
          top = std::max(top, w[static_cast<size_t>(s)]);
        }
        for (auto& v : w) sum += (v = std::exp(v - top));
        for (int64_t i = 0; i < d; ++i) {
          double v = 0;
          for (int64_t s = 0; s < keys; ++s)
            v += w[static_cast<size_t>(s)] / sum * at(s, n, h, 2, i);
          context[static_cast<size_t>((t * N + n) * C + h * d + i)] = v;
        }
      }
  return linear(context, arg(exe, layer + "_proj_weight"), arg(exe, layer + "_proj_bias"), C, C);
}

Values layer_norm(const Executor& exe, const std::string& layer, const Values& x, int64_t C) {
  const Values g = arg(exe, layer + "_gamma"), b = arg(exe, layer + "_beta");
  Values y(x.size());
  for (size_t r = 0; r < x.size() / static_cast<size_t>(C); ++r) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < C; ++i) mean += x[r * static_cast<size_t>(C) + static_cast<size_t>(i)];
    mean /= static_cast<double>(C);
    for (int64_t i = 0; i < C; ++i)
      var += std::pow(x[r * static_cast<size_t>(C) + static_cast<size_t>(i)] - mean, 2);
    var /= static_cast<double>(C);
    for (int64_t i = 0; i < C; ++i) {
      const size_t k = r * static_cast<size_t>(C) + static_cast<size_t>(i);
      y[k] = (x[k] - mean) / std::sqrt(var + 1e-5) * g[static_cast<size_t>(i)] +
             b[static_cast<size_t>(i)];
    }
  }
  return y;
}

Values plus(Values a, const Values& b) {
  for (size_t i = 0; i < a.size(); ++i) a[i] += b[i];
  return a;
}

// (T, N, C) <-> (N, T, C)
Values swap01(const Values& x, int64_t A, int64_t B, int64_t C) {
  Values y(x.size());
  for (int64_t a = 0; a < A; ++a)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t c = 0; c < C; ++c)
        y[static_cast<size_t>((b * A + a) * C + c)] = x[static_cast<size_t>((a * B + b) * C + c)];
  return y;
}

void check_close(const Values& got, const Values& want, double tolerance = 1e-10) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element ", i);
    CHECK(got[i] == doctest::Approx(want[i]).epsilon(tolerance));
  }
}

constexpr const char* kAttention = R"(
layers:
  - {op: SelfAttention, name: att, units: 6, heads: 3, causal: CAUSAL, layout: LAYOUT}
)";

std::string attention_net(bool causal, const std::string& layout) {
  std::string text = kAttention;
  text.replace(text.find("CAUSAL"), 6, causal ? "true" : "false");
  text.replace(text.find("LAYOUT"), 6, layout);
  return text;
}

// The transformer block of configs/chargpt-fortunes.yaml, tiny.
constexpr const char* kGptBlock = R"(
blocks:
  transformer:
    params: {units: 128, heads: 4, dropout: 0.1}
    layers:
      - {op: LayerNorm, name: ln1}
      - {op: SelfAttention, name: attention, units: "${units}", heads: "${heads}", causal: true,
         dropout: "${dropout}"}
      - {op: Dropout, name: attention_dropout, p: "${dropout}"}
      - {op: elemwise_add, name: residual1, inputs: [input, attention_dropout]}
      - {op: LayerNorm, name: ln2}
      - {op: FullyConnected, name: ffn1, num_hidden: "${4 * units}", flatten: false}
      - {op: LeakyReLU, name: gelu, act_type: gelu}
      - {op: FullyConnected, name: ffn2, num_hidden: "${units}", flatten: false}
      - {op: Dropout, name: ffn_dropout, p: "${dropout}"}
      - {op: elemwise_add, name: residual2, inputs: [residual1, ffn_dropout]}
layers:
  - {block: transformer, name: layer, repeat: 2, units: 4, heads: 2, dropout: 0.1}
)";

}  // namespace

TEST_CASE("SelfAttention equals multi-head attention written out, causal or not, TNC or NTC") {
  const int64_t T = 4, N = 2, C = 6, heads = 3;
  for (bool causal : {false, true}) {
    for (const std::string layout : {"TNC", "NTC"}) {
      CAPTURE(causal);
      CAPTURE(layout);
      const graph::Symbol net = build(attention_net(causal, layout));
      const Shape shape = layout == "TNC" ? Shape{T, N, C} : Shape{N, T, C};
      auto exe = bind64(net, shape);
      exe->forward(false);
      const Values x = arg(*exe, "data");
      if (layout == "TNC") {
        check_close(exe->outputs()[0].to_vector<double>(),
                    attention(*exe, "att", x, T, N, C, heads, causal));
      } else {
        const Values want = attention(*exe, "att", swap01(x, N, T, C), T, N, C, heads, causal);
        check_close(exe->outputs()[0].to_vector<double>(), swap01(want, T, N, C));
      }
    }
  }
}

TEST_CASE("causal attention: a step's output does not depend on later steps") {
  const int64_t T = 5, N = 2, C = 6;
  auto exe = bind64(build(attention_net(true, "TNC")), Shape{T, N, C});
  exe->forward(false);
  const Values before = exe->outputs()[0].to_vector<double>();
  Values x = arg(*exe, "data");
  for (int64_t i = 3 * N * C; i < T * N * C; ++i) x[static_cast<size_t>(i)] += 1.5;  // steps 3, 4
  NDArray::from_vector<double>(Shape{T, N, C}, x)
      .copy_to(const_cast<NDArray&>(exe->arg_dict().at("data")));
  exe->forward(false);
  const Values after = exe->outputs()[0].to_vector<double>();
  for (int64_t i = 0; i < T * N * C; ++i) {
    INFO("element ", i);
    if (i < 3 * N * C)
      CHECK(after[static_cast<size_t>(i)] == before[static_cast<size_t>(i)]);
    else
      CHECK(after[static_cast<size_t>(i)] != before[static_cast<size_t>(i)]);
  }
}

TEST_CASE("SelfAttention's gradients match finite differences (data and every weight)") {
  const int64_t T = 3, N = 2, C = 4;
  for (bool causal : {false, true}) {
    CAPTURE(causal);
    const graph::Symbol net = build(R"(
layers:
  - {op: SelfAttention, name: att, units: 4, heads: 2, causal: )" +
                                    std::string(causal ? "true" : "false") + "}\n");
    auto exe = bind64(net, Shape{T, N, C});
    // The loss sum(out * r) for a fixed r: its gradient is the head gradient r.
    const Shape out_shape{T, N, C};
    const Values r = values_for("head", out_shape.size(), 1.0);
    const NDArray head = NDArray::from_vector<double>(out_shape, r);
    auto loss = [&] {
      exe->forward(true);
      const Values y = exe->outputs()[0].to_vector<double>();
      double s = 0;
      for (size_t i = 0; i < y.size(); ++i) s += y[i] * r[i];
      return s;
    };
    loss();
    exe->backward({head});
    for (const std::string name :
         {"data", "att_qkv_weight", "att_qkv_bias", "att_proj_weight", "att_proj_bias"}) {
      CAPTURE(name);
      const Values grad = exe->grad_dict().at(name).to_vector<double>();
      NDArray& a = const_cast<NDArray&>(exe->arg_dict().at(name));
      Values v = a.to_vector<double>();
      for (size_t i = 0; i < v.size(); i += 3) {  // every third element: enough, and quick
        const double keep = v[i], eps = 1e-6;
        v[i] = keep + eps;
        NDArray::from_vector<double>(a.shape(), v).copy_to(a);
        const double up = loss();
        v[i] = keep - eps;
        NDArray::from_vector<double>(a.shape(), v).copy_to(a);
        const double down = loss();
        v[i] = keep;
        NDArray::from_vector<double>(a.shape(), v).copy_to(a);
        INFO("element ", i);
        CHECK(grad[i] == doctest::Approx((up - down) / (2 * eps)).epsilon(1e-6));
      }
    }
  }
}

TEST_CASE("the GPT block of chargpt-fortunes.yaml equals LayerNorm, attention, GELU, residuals") {
  const int64_t T = 3, N = 2, C = 4;
  const graph::Symbol net = build(kGptBlock);
  auto exe = bind64(net, Shape{T, N, C});
  exe->forward(false);  // dropout is off in inference
  Values x = arg(*exe, "data");
  for (const std::string layer : {"layer1", "layer2"}) {
    const Values att = attention(*exe, layer + "_attention", layer_norm(*exe, layer + "_ln1", x, C),
                                 T, N, C, 2, true);
    const Values r1 = plus(x, att);
    Values h = linear(layer_norm(*exe, layer + "_ln2", r1, C), arg(*exe, layer + "_ffn1_weight"),
                      arg(*exe, layer + "_ffn1_bias"), C, 4 * C);
    for (auto& v : h) v = 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));  // GELU, exact
    x = plus(r1, linear(h, arg(*exe, layer + "_ffn2_weight"), arg(*exe, layer + "_ffn2_bias"),
                        4 * C, C));
  }
  check_close(exe->outputs()[0].to_vector<double>(), x, 1e-9);
}

TEST_CASE("a one-layer GPT in YAML equals the same network built and run by MXNet 1.9.1") {
  // configs/chargpt-fortunes.yaml's network, tiny and without dropout; the
  // fixture is made by scripts/fixtures/make_graph_fixtures.py (chargpt).
  const graph::Symbol net = build(R"(
blocks:
  position_embedding:
    params: {max_len: 64, units: 128}
    layers:
      - {op: _contrib_arange_like, name: positions, axis: 0}
      - {op: Embedding, name: embed, input_dim: "${max_len}", output_dim: "${units}"}
      - {op: Reshape, name: steps_first, shape: [0, 1, -1]}
      - {op: broadcast_add, name: add, inputs: [input, steps_first]}
  transformer:
    params: {units: 128, heads: 4}
    layers:
      - {op: LayerNorm, name: ln1}
      - {op: SelfAttention, name: attention, units: "${units}", heads: "${heads}", causal: true}
      - {op: elemwise_add, name: residual1, inputs: [input, attention]}
      - {op: LayerNorm, name: ln2}
      - {op: FullyConnected, name: ffn1, num_hidden: "${4 * units}", flatten: false}
      - {op: LeakyReLU, name: gelu, act_type: gelu}
      - {op: FullyConnected, name: ffn2, num_hidden: "${units}", flatten: false}
      - {op: elemwise_add, name: residual2, inputs: [residual1, ffn2]}
layers:
  - {op: transpose, name: steps_first, axes: [1, 0]}
  - {op: Embedding, name: embed, input_dim: 11, output_dim: 8}
  - {block: position_embedding, name: position, max_len: 8, units: 8}
  - {block: transformer, name: layer, units: 8, heads: 2}
  - {op: LayerNorm, name: ln_final}
  - {op: transpose, name: batch_first, axes: [1, 0, 2]}
  - {op: Reshape, name: flat, shape: [-1, 8]}
  - {op: FullyConnected, name: fc, num_hidden: 11}
  - {op: SoftmaxOutput, name: softmax, normalization: valid}
)");
  const std::string dir = std::string(MX_FIXTURES_DIR) + "/graph/";
  const graph::Symbol mxnet = graph::Symbol::load(dir + "chargpt-symbol.json");
  CHECK(net.list_arguments() == mxnet.list_arguments());
  std::vector<std::string> ops, mxnet_ops;
  for (const auto& n : graph::topo_order(net.outputs())) ops.push_back(n->name);
  for (const auto& n : graph::topo_order(mxnet.outputs())) mxnet_ops.push_back(n->name);
  CHECK(ops == mxnet_ops);

  const NamedArrays run = load_params(dir + "chargpt-run.params");
  std::map<std::string, NDArray> args, grads;
  BindOptions options;
  options.grad_req["data"] = graph::GradReq::kNull;
  for (const auto& n : net.list_arguments()) {
    args[n] = run.get("arg:" + n).copy();
    grads[n] = NDArray::zeros(args[n].shape());
  }
  Executor exe(net, args, grads, {}, options);
  exe.forward(true);
  exe.backward();
  auto close = [](const NDArray& got, const NDArray& want) {
    const auto a = got.to_vector<float>(), b = want.to_vector<float>();
    REQUIRE(a.size() == b.size());
    int bad = 0;
    for (size_t i = 0; i < a.size(); ++i)
      if (!(std::abs(a[i] - b[i]) <= 1e-4 + 1e-3 * std::abs(b[i]))) ++bad;
    return bad;
  };
  CHECK(close(exe.outputs()[0], run.get("out:0")) == 0);
  for (const auto& n : net.list_arguments()) {
    if (n == "data") continue;
    CAPTURE(n);
    CHECK(close(exe.grad_dict().at(n), run.get("grad:" + n)) == 0);
  }
}

TEST_CASE("SelfAttention is made of MXNet's operators and survives the symbol JSON") {
  const graph::Symbol net = build(kGptBlock);
  const std::set<std::string> mxnet_ops = {"LayerNorm",
                                           "FullyConnected",
                                           "_contrib_interleaved_matmul_selfatt_qk",
                                           "_contrib_arange_like",
                                           "Reshape",
                                           "broadcast_sub",
                                           "clip",
                                           "_mul_scalar",
                                           "broadcast_add",
                                           "softmax",
                                           "Dropout",
                                           "_contrib_interleaved_matmul_selfatt_valatt",
                                           "elemwise_add",
                                           "LeakyReLU"};
  for (const auto& node : graph::topo_order(net.outputs()))
    if (!node->is_variable()) {
      CAPTURE(node->name);
      CHECK(mxnet_ops.count(node->op->def().name) == 1);
    }
  CHECK(net.list_arguments() == std::vector<std::string>{"data",
                                                         "layer1_ln1_gamma",
                                                         "layer1_ln1_beta",
                                                         "layer1_attention_qkv_weight",
                                                         "layer1_attention_qkv_bias",
                                                         "layer1_attention_proj_weight",
                                                         "layer1_attention_proj_bias",
                                                         "layer1_ln2_gamma",
                                                         "layer1_ln2_beta",
                                                         "layer1_ffn1_weight",
                                                         "layer1_ffn1_bias",
                                                         "layer1_ffn2_weight",
                                                         "layer1_ffn2_bias",
                                                         "layer2_ln1_gamma",
                                                         "layer2_ln1_beta",
                                                         "layer2_attention_qkv_weight",
                                                         "layer2_attention_qkv_bias",
                                                         "layer2_attention_proj_weight",
                                                         "layer2_attention_proj_bias",
                                                         "layer2_ln2_gamma",
                                                         "layer2_ln2_beta",
                                                         "layer2_ffn1_weight",
                                                         "layer2_ffn1_bias",
                                                         "layer2_ffn2_weight",
                                                         "layer2_ffn2_bias"});
  const graph::Symbol loaded = graph::Symbol::from_json(net.to_json());
  auto a = bind64(net, Shape{5, 2, 4});
  auto b = bind64(loaded, Shape{5, 2, 4});
  a->forward(false);
  b->forward(false);
  CHECK(a->outputs()[0].to_vector<double>() == b->outputs()[0].to_vector<double>());
}

TEST_CASE("the causal mask takes no gradient: no backward pass runs through it") {
  const graph::Symbol net = build(attention_net(true, "TNC"));
  auto exe = bind64(net, Shape{3, 2, 6});
  int mask_steps = 0, backward_through_mask = 0;
  for (const auto& step : exe->profile(1)) {
    if (step.node.find("att_causal_") == std::string::npos) continue;
    ++mask_steps;
    if (step.backward) ++backward_through_mask;
  }
  CHECK(mask_steps == 6);  // steps, queries, keys, offset, future, bias: forward only
  CHECK(backward_through_mask == 0);
}

TEST_CASE("SelfAttention's errors name the file, the line, the layer and what to change") {
  auto layer = [](const std::string& keys) {
    return "layers:\n  - {op: Embedding, input_dim: 9, output_dim: 8}\n"
           "  - {op: SelfAttention, name: att, " +
           keys + "}\n";
  };
  CHECK(error_of(layer("units: 8, heads: 3")) ==
        "net.yaml:3:5: layer 'att': heads (3) must divide units (8): each head takes units / "
        "heads of the width");
  CHECK(error_of(layer("heads: 2")) ==
        "net.yaml:3:5: layer 'att': SelfAttention needs 'units' (the width of its queries, keys, "
        "values and output, e.g. units: 128)");
  CHECK(error_of(layer("units: 8")).find("needs 'heads'") != std::string::npos);
  CHECK(error_of(layer("units: 4000000000000000000, heads: 1")) ==
        "net.yaml:3:5: layer 'att': units must be at most 715827882, not 4000000000000000000");
  CHECK(error_of(layer("units: 8, heads: 0")) ==
        "net.yaml:3:5: layer 'att': heads must be at least 1, not 0");
  CHECK(error_of(layer("units: 8, heads: 2, casual: true")) ==
        "net.yaml:3:5: layer 'att': SelfAttention has no key 'casual' (did you mean 'causal'?); "
        "its keys: units, heads, causal, dropout, layout, lr_mult, wd_mult, mirror");
  CHECK(error_of(layer("units: 8, heads: 2, layout: NCT")).find("layout must be TNC") !=
        std::string::npos);
  CHECK(error_of(layer("units: 8, heads: 2, causal: maybe")).find("layer 'att': causal: ") !=
        std::string::npos);
  CHECK(error_of(layer("units: 8, heads: 2, dropout: 1")) ==
        "net.yaml:3:5: layer 'att': dropout must be in [0, 1), not 1");
  CHECK(error_of("layers:\n  - {op: SelfAttention, name: att, units: 8, heads: 2, inputs: [data, "
                 "data]}\n") == "net.yaml:2:64: layer 'att': SelfAttention takes one input, not 2");
  CHECK(error_of("layers:\n  - {op: SelfAtention, units: 8}\n")
            .find("unknown operator 'SelfAtention' (did you mean 'SelfAttention'?)") !=
        std::string::npos);
}

TEST_CASE("a network that does not take its data is refused naming the YAML layer and the shapes") {
  LayerOrigins origins;
  const graph::Symbol net = build(R"(
blocks:
  gpt:
    params: {units: 8}
    layers:
      - {op: SelfAttention, name: attention, units: "${units}", heads: 2}
layers:
  - {op: Embedding, name: embed, input_dim: 9, output_dim: 8}
  - {op: Reshape, name: rows, shape: [-1, 8]}
  - {block: gpt, name: layer}
)",
                                  &origins);
  CHECK(origins.at("embed_weight") == "net.yaml:8:5: layer 'embed'");
  CHECK(origins.at("layer_attention_scores") == "net.yaml:6:9: layer 'layer_attention'");
  TrainSettings settings;
  settings.data_name = "data";
  try {
    check_network_takes(net, settings, Shape{4, 16}, origins);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) ==
          "net.yaml:6:9: layer 'layer_attention': the network does not take the data (data (4, "
          "16)): node 'layer_attention_scores' (_contrib_interleaved_matmul_selfatt_qk): input "
          "'queries_keys_values' must have 3 dimensions, but has shape (64, 24)");
  }
  CHECK_NOTHROW(check_network_takes(build("layers:\n  - {op: Embedding, input_dim: 9, output_dim: "
                                          "8}\n  - {op: SelfAttention, units: 8, heads: 2}\n"),
                                    settings, Shape{4, 16}, {}));
}

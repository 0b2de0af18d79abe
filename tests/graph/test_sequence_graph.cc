// The sequence-model operators inside a bound graph: a BERT-style encoder
// block (interleaved self-attention with softmax over valid lengths, a
// residual add, LayerNorm, a GELU feed-forward layer) between
// SequenceReverse and SequenceMask/SequenceLast. The planned executor
// (in-place outputs, shared buffers) must give bit-identical values to naive
// allocation, which fails for an in-place or backward_uses flag the kernels
// do not keep; and the whole network's gradients match finite differences.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "executor/executor.h"

using namespace mx;
using namespace mx::graph;

namespace {

constexpr int64_t kSteps = 4, kBatch = 2, kHeads = 2, kChannels = 8;

Symbol var(const std::string& name) { return Symbol::variable(name); }
Symbol op(const std::string& type, const std::string& name, const op::AttrMap& attrs,
          const std::vector<Symbol>& inputs) {
  return Symbol::create(type, name, attrs, inputs);
}
Symbol dense(const Symbol& x, const std::string& name, int64_t hidden) {
  return op("FullyConnected", name, {{"num_hidden", std::to_string(hidden)}, {"flatten", "False"}},
            {x});
}

Symbol encoder_block() {
  const op::AttrMap heads{{"heads", std::to_string(kHeads)}};
  const op::AttrMap with_length{{"use_sequence_length", "True"}};
  Symbol seq_len = var("seq_len");
  Symbol x = op("SequenceReverse", "reverse", with_length, {var("data"), seq_len});
  Symbol qkv = dense(x, "qkv", 3 * kChannels);
  Symbol scores = op("_contrib_interleaved_matmul_selfatt_qk", "scores", heads, {qkv});
  Symbol probs =
      op("softmax", "probs", {{"use_length", "True"}, {"axis", "-1"}}, {scores, var("att_len")});
  Symbol context = op("_contrib_interleaved_matmul_selfatt_valatt", "context", heads, {qkv, probs});
  Symbol proj = op("_contrib_div_sqrt_dim", "scale", {}, {dense(context, "proj", kChannels)});
  Symbol ln1 = op("LayerNorm", "ln1", {}, {op("elemwise_add", "res1", {}, {proj, x})});
  Symbol ff = op("LeakyReLU", "gelu", {{"act_type", "gelu"}}, {dense(ln1, "ff1", 16)});
  Symbol ln2 = op("LayerNorm", "ln2", {},
                  {op("elemwise_add", "res2", {}, {dense(ff, "ff2", kChannels), ln1})});
  Symbol masked = op("SequenceMask", "mask", with_length, {ln2, seq_len});
  return op("SequenceLast", "last", with_length, {masked, seq_len});
}

const ShapeMap kShapes{{"data", Shape{kSteps, kBatch, kChannels}},
                       {"seq_len", Shape{kBatch}},
                       {"att_len", Shape{kBatch * kHeads, kSteps}}};

std::unique_ptr<Executor> bind(const Symbol& s, bool planned) {
  BindOptions o;
  o.for_training = true;
  for (const auto& name : s.list_arguments()) o.dtypes[name] = DType::kFloat64;
  o.dtypes["att_len"] = DType::kInt32;
  o.grad_req = {{"seq_len", GradReq::kNull}, {"att_len", GradReq::kNull}};
  o.memory.inplace = planned;
  o.memory.coshare = planned;
  return Executor::simple_bind(s, kShapes, o);
}

// Random parameters and data, the lengths of sequences 3 and 4.
void fill(Executor& exe) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  for (const auto& [name, a] : exe.arg_dict()) {
    NDArray target = a;
    if (name == "seq_len") {
      NDArray::from_vector<double>({kBatch}, {3, 4}).copy_to(target);
    } else if (name == "att_len") {
      std::vector<int32_t> v;
      for (int64_t n = 0; n < kBatch; ++n)
        for (int64_t k = 0; k < kHeads * kSteps; ++k) v.push_back(n == 0 ? 3 : 4);
      NDArray::from_vector<int32_t>({kBatch * kHeads, kSteps}, v).copy_to(target);
    } else {
      std::vector<double> v(static_cast<size_t>(a.size()));
      for (auto& x : v) x = u(rng);
      NDArray::from_vector<double>(a.shape(), v).copy_to(target);
    }
  }
}

}  // namespace

TEST_CASE(
    "an encoder block: the planned executor gives bit-identical results to naive allocation") {
  Symbol net = encoder_block();
  auto planned = bind(net, true);
  auto naive = bind(net, false);
  fill(*planned);
  fill(*naive);
  for (int iteration = 0; iteration < 2; ++iteration) {
    planned->forward(true);
    planned->backward();
    naive->forward(true);
    naive->backward();
  }
  CHECK(planned->outputs()[0].shape() == Shape{kBatch, kChannels});
  CHECK(planned->outputs()[0].to_vector<double>() == naive->outputs()[0].to_vector<double>());
  for (const auto& [name, g] : planned->grad_dict()) {
    CAPTURE(name);
    CHECK(g.to_vector<double>() == naive->grad_dict().at(name).to_vector<double>());
  }
  CHECK(planned->memory_report().planned_internal_bytes <
        naive->memory_report().planned_internal_bytes);
}

TEST_CASE("an encoder block: whole-network gradients match finite differences") {
  Symbol net = encoder_block();
  auto exe = bind(net, true);
  fill(*exe);
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> w(static_cast<size_t>(kBatch * kChannels));
  for (auto& x : w) x = u(rng);
  NDArray head = NDArray::from_vector<double>({kBatch, kChannels}, w);
  exe->forward(true);
  exe->backward({head});
  auto loss = [&] {
    exe->forward(true);
    const auto y = exe->outputs()[0].to_vector<double>();
    double l = 0;
    for (size_t i = 0; i < y.size(); ++i) l += y[i] * w[i];
    return l;
  };
  for (const char* name : {"data", "qkv_weight", "proj_weight", "ln1_gamma", "ff1_weight"}) {
    CAPTURE(name);
    NDArray a = exe->arg_dict().at(name);
    const auto grad = exe->grad_dict().at(name).to_vector<double>();
    int nonzero = 0;
    for (int64_t i = 0; i < std::min<int64_t>(a.size(), 16); ++i) {
      Engine::get().wait_all();
      double* p = a.data<double>();
      const double saved = p[i], step = 1e-6;
      p[i] = saved + step;
      const double plus = loss();
      p[i] = saved - step;
      const double minus = loss();
      p[i] = saved;
      const double numeric = (plus - minus) / (2 * step);
      CHECK(grad[static_cast<size_t>(i)] == doctest::Approx(numeric).epsilon(1e-5).scale(1.0));
      nonzero += grad[static_cast<size_t>(i)] != 0;
    }
    CHECK(nonzero > 0);
  }
}

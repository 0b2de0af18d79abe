#include "op/dnnl/dnnl_rnn.h"

#include <omp.h>

#include <cstring>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "base/error.h"
#include "base/parallel.h"
#include "op/dnnl/dnnl_context.h"
#include "op/dnnl/dnnl_rnn_weights.h"
#include "op/nn/rnn_cpu_steps.h"

namespace mx::op::dnnl_impl {
namespace {

using md = dnnl::memory::desc;
using prop = dnnl::prop_kind;

constexpr size_t kAlign = 64;
size_t aligned(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }
// Float offsets in the workspace stay 64-byte aligned from its start.
int64_t aligned_floats(int64_t n) { return (n + 15) / 16 * 16; }
int64_t floats_of(size_t bytes) { return static_cast<int64_t>((bytes + 3) / 4); }

// The shapes of one group's primitive.
struct GroupShape {
  RnnMode mode;
  int64_t T, N, C, H, P, L, D;

  GroupShape(const RnnParam& p, const RnnGeometry& g, const RnnGroup& group)
      : mode(p.mode), T(g.T), N(g.N), C(group.input), H(g.H), P(g.P), L(group.count), D(g.D) {}
  int64_t gates() const { return mode == RnnMode::kLstm ? 4 : (mode == RnnMode::kGru ? 3 : 1); }
  bool lstm() const { return mode == RnnMode::kLstm; }
  bool projection() const { return P != H; }
  // With the thread count: oneDNN plans a primitive's work for the threads
  // there are when it is made (brgemm's inference pass ran 40 times slower
  // on 1 thread when made for 2).
  std::string key(const char* pass) const {
    return make_key("rnn", pass, dnnl_threads(), static_cast<int>(mode), T, N, C, H, P, L, D);
  }
};

// Its memory descriptors: mx's plain layouts for data and states (TNC,
// (layers*directions, N, C)), `any` for the weights so that oneDNN picks
// its layouts, and the plain ones the weights are gathered into.
struct GroupDescs {
  md src_layer, src_iter, src_iter_c, dst_layer, dst_iter, dst_iter_c, bias;
  md layer, iter, projection;                    // any
  md plain_layer, plain_iter, plain_projection;  // ldgoi, ldgoi, ldoi

  explicit GroupDescs(const GroupShape& s) {
    const int64_t G = s.gates(), L = s.L, D = s.D;
    src_layer = plain({s.T, s.N, s.C}, tag::tnc);
    dst_layer = plain({s.T, s.N, D * s.P}, tag::tnc);
    src_iter = dst_iter = plain({L, D, s.N, s.P}, tag::ldnc);
    if (s.lstm()) src_iter_c = dst_iter_c = plain({L, D, s.N, s.H}, tag::ldnc);
    bias = plain({L, D, rnn_bias_gates(s.mode), s.H}, tag::ldgo);
    layer = any({L, D, s.C, G, s.H});
    iter = any({L, D, s.P, G, s.H});
    plain_layer = plain({L, D, s.C, G, s.H}, tag::ldgoi);
    plain_iter = plain({L, D, s.P, G, s.H}, tag::ldgoi);
    if (s.projection()) {
      projection = any({L, D, s.H, s.P});
      plain_projection = plain({L, D, s.H, s.P}, tag::ldoi);
    }
  }
};

dnnl::rnn_direction direction(const GroupShape& s) {
  return s.D == 2 ? dnnl::rnn_direction::bidirectional_concat
                  : dnnl::rnn_direction::unidirectional_left2right;
}

dnnl::algorithm activation(RnnMode mode) {
  return mode == RnnMode::kRnnRelu ? dnnl::algorithm::eltwise_relu : dnnl::algorithm::eltwise_tanh;
}

dnnl::rnn_primitive_desc_base forward_pd(const GroupShape& s, const GroupDescs& d, prop pass) {
  const dnnl::engine& engine = cpu_engine();
  const auto dir = direction(s);
  switch (s.mode) {
    case RnnMode::kLstm:
      return dnnl::lstm_forward::primitive_desc(
          {pass, dir, d.src_layer, d.src_iter, d.src_iter_c, d.layer, d.iter, md(), d.projection,
           d.bias, d.dst_layer, d.dst_iter, d.dst_iter_c},
          scratch_attr(), engine);
    case RnnMode::kGru:
      return dnnl::lbr_gru_forward::primitive_desc(
          {pass, dir, d.src_layer, d.src_iter, d.layer, d.iter, d.bias, d.dst_layer, d.dst_iter},
          scratch_attr(), engine);
    default:
      return dnnl::vanilla_rnn_forward::primitive_desc(
          {pass, activation(s.mode), dir, d.src_layer, d.src_iter, d.layer, d.iter, d.bias,
           d.dst_layer, d.dst_iter},
          scratch_attr(), engine);
  }
}

// The diff tensors have the layouts of the tensors they are the gradients of.
dnnl::rnn_primitive_desc_base backward_pd(const GroupShape& s, const GroupDescs& d,
                                          const dnnl::rnn_primitive_desc_base& hint) {
  const dnnl::engine& engine = cpu_engine();
  const auto dir = direction(s);
  constexpr prop pass = prop::backward;
  switch (s.mode) {
    case RnnMode::kLstm:
      return dnnl::lstm_backward::primitive_desc(
          {pass,         dir,          d.src_layer,  d.src_iter,   d.src_iter_c, d.layer,
           d.iter,       md(),         d.projection, d.bias,       d.dst_layer,  d.dst_iter,
           d.dst_iter_c, d.src_layer,  d.src_iter,   d.src_iter_c, d.layer,      d.iter,
           md(),         d.projection, d.bias,       d.dst_layer,  d.dst_iter,   d.dst_iter_c},
          scratch_attr(), engine, dnnl::lstm_forward::primitive_desc(hint.get()));
    case RnnMode::kGru:
      return dnnl::lbr_gru_backward::primitive_desc(
          {pass, dir, d.src_layer, d.src_iter, d.layer, d.iter, d.bias, d.dst_layer, d.dst_iter,
           d.src_layer, d.src_iter, d.layer, d.iter, d.bias, d.dst_layer, d.dst_iter},
          scratch_attr(), engine, dnnl::lbr_gru_forward::primitive_desc(hint.get()));
    default:
      return dnnl::vanilla_rnn_backward::primitive_desc(
          {pass, activation(s.mode), dir, d.src_layer, d.src_iter, d.layer, d.iter, d.bias,
           d.dst_layer, d.dst_iter, d.src_layer, d.src_iter, d.layer, d.iter, d.bias, d.dst_layer,
           d.dst_iter},
          scratch_attr(), engine, dnnl::vanilla_rnn_forward::primitive_desc(hint.get()));
  }
}

// One weight tensor between its plain layout and the one a primitive wants.
struct WeightFormat {
  md want, user;
  std::optional<dnnl::reorder> convert;  // user -> want (inputs) or want -> user (gradients)

  WeightFormat() = default;
  WeightFormat(const md& wanted, const md& plain_layout, bool to_user) : want(wanted) {
    user = plain_layout;
    if (want.is_zero() || want == user) return;
    const dnnl::engine& e = cpu_engine();
    convert = to_user ? dnnl::reorder({e, want, e, user}) : dnnl::reorder({e, user, e, want});
  }
  size_t bytes() const { return aligned(want.get_size()); }
};

// The weights a primitive reads: one buffer holding layer, iter,
// projection (as it wants them) and the plain bias.
struct WeightSet {
  WeightFormat layer, iter, projection;
  md bias;
  size_t bytes() const {
    return layer.bytes() + iter.bytes() + projection.bytes() + aligned(bias.get_size());
  }
  std::byte* at(std::byte* base, int arg) const {
    switch (arg) {
      case DNNL_ARG_WEIGHTS_LAYER: return base;
      case DNNL_ARG_WEIGHTS_ITER: return base + layer.bytes();
      case DNNL_ARG_WEIGHTS_PROJECTION: return base + layer.bytes() + iter.bytes();
      default: return base + layer.bytes() + iter.bytes() + projection.bytes();  // bias
    }
  }
};

WeightSet weight_set(const dnnl::rnn_primitive_desc_base& pd, const GroupDescs& d) {
  WeightSet w;
  w.layer = WeightFormat(pd.weights_layer_desc(), d.plain_layer, false);
  w.iter = WeightFormat(pd.weights_iter_desc(), d.plain_iter, false);
  if (!d.projection.is_zero())
    w.projection = WeightFormat(pd.weights_projection_desc(), d.plain_projection, false);
  w.bias = d.bias;
  return w;
}

struct ForwardPass {
  dnnl::primitive primitive;
  GroupDescs descs;
  WeightSet weights;
  md workspace, scratchpad;
};

struct BackwardPass {
  dnnl::primitive primitive;
  GroupDescs descs;
  WeightSet weights;
  WeightFormat diff_layer, diff_iter, diff_projection;  // want -> plain
  md workspace, scratchpad;
};

template <typename V>
std::shared_ptr<const V> cached(const std::string& key, const std::function<V()>& make) {
  static std::mutex mutex;
  static std::unordered_map<std::string, std::shared_ptr<const V>> cache;
  {
    std::lock_guard lock(mutex);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  auto made = std::make_shared<const V>(make());
  std::lock_guard lock(mutex);
  if (cache.size() >= 1024) cache.clear();  // a bound on shapes seen
  return cache.emplace(key, std::move(made)).first->second;
}

std::shared_ptr<const ForwardPass> forward_pass(const GroupShape& s, bool training) {
  return cached<ForwardPass>(s.key(training ? "fwd_train" : "fwd_infer"), [&] {
    omp_set_num_threads(dnnl_threads());  // made for the threads it runs on
    GroupDescs d(s);
    auto pd = forward_pd(s, d, training ? prop::forward_training : prop::forward_inference);
    ForwardPass f{dnnl::primitive(pd), d, weight_set(pd, d), pd.workspace_desc(),
                  pd.scratchpad_desc()};
    return f;
  });
}

std::shared_ptr<const BackwardPass> backward_pass(const GroupShape& s) {
  return cached<BackwardPass>(s.key("bwd"), [&] {
    omp_set_num_threads(dnnl_threads());
    GroupDescs d(s);
    auto hint = forward_pd(s, d, prop::forward_training);
    auto pd = backward_pd(s, d, hint);
    BackwardPass b{dnnl::primitive(pd), d, weight_set(pd, d), {}, {}, {}, pd.workspace_desc(),
                   pd.scratchpad_desc()};
    b.diff_layer = WeightFormat(pd.diff_weights_layer_desc(), d.plain_layer, true);
    b.diff_iter = WeightFormat(pd.diff_weights_iter_desc(), d.plain_iter, true);
    if (!d.projection.is_zero())
      b.diff_projection = WeightFormat(pd.diff_weights_projection_desc(), d.plain_projection, true);
    return b;
  });
}

// Where the oneDNN path keeps its forward values in the 'workspace' output
// (float offsets): the final states of every layer (state order, as the
// state outputs), per group oneDNN's workspace (training) and its output
// sequence, per layer with dropout after it the mask and the masked
// sequence the next layer read.
struct WorkspaceLayout {
  // 1 once a backward pass ran on it: oneDNN's backward pass overwrites its
  // workspace, so a second backward pass (the harness's write, then add)
  // runs the forward pass again first.
  int64_t consumed = 0;
  int64_t hy = 0, cy = 0;
  std::vector<int64_t> workspace, out;
  std::vector<int64_t> mask, dropped;  // per layer; -1 without
  int64_t total = 0;
};

bool dropout_after(const RnnGeometry& g, int64_t layer, bool training) {
  return training && g.dropout && layer + 1 < g.L;
}

WorkspaceLayout workspace_layout(const RnnParam& p, const RnnGeometry& g,
                                 const std::vector<RnnGroup>& groups, bool training) {
  WorkspaceLayout w;
  int64_t at = 0;
  auto take = [&](int64_t n) {
    const int64_t start = at;
    at += aligned_floats(n);
    return start;
  };
  w.consumed = take(1);
  w.hy = take(g.states() * g.N * g.P);
  if (p.lstm()) w.cy = take(g.states() * g.N * g.H);
  const int64_t sequence = g.T * g.N * g.D * g.P;
  for (const RnnGroup& group : groups) {
    const int64_t ws =
        training ? floats_of(forward_pass(GroupShape(p, g, group), true)->workspace.get_size()) : 0;
    w.workspace.push_back(take(ws));
    w.out.push_back(take(sequence));
  }
  for (int64_t l = 0; l < g.L; ++l) {
    const bool masked = dropout_after(g, l, training);
    w.mask.push_back(masked ? take(sequence) : -1);
    w.dropped.push_back(masked ? take(sequence) : -1);
  }
  w.total = at;
  return w;
}

// Temporary buffers of a call, taken from the TempSpace in one piece.
class Arena {
 public:
  size_t add(size_t bytes) {
    const size_t at = total_;
    total_ += aligned(bytes);
    return at;
  }
  void take(const OpResources& res) {
    auto* base = static_cast<std::byte*>(res.temp_space(total_ + kAlign));
    const auto address = reinterpret_cast<uintptr_t>(base);
    base_ = base + (kAlign - address % kAlign) % kAlign;
  }
  template <typename T = std::byte>
  T* at(size_t offset) const {
    return reinterpret_cast<T*>(base_ + offset);
  }

 private:
  size_t total_ = 0;
  std::byte* base_ = nullptr;
};

dnnl::stream& cpu_stream() {
  thread_local dnnl::stream stream(cpu_engine());  // in-order, one per calling thread
  return stream;
}

// The group's parameters as `set` wants them, in `out`.
void pack_weights(const RnnParam& p, const RnnGeometry& g, const RnnGroup& group,
                  const WeightSet& set, const float* flat, std::byte* out) {
  const RnnWeightSizes sizes = rnn_weight_sizes(g, group, p.mode);
  std::vector<float> staging;
  auto target = [&](const WeightFormat& f, int arg, int64_t n) -> float* {
    if (!f.convert) return reinterpret_cast<float*>(set.at(out, arg));
    const size_t start = staging.size();
    staging.resize(start + static_cast<size_t>(n));
    return staging.data() + start;
  };
  staging.reserve(static_cast<size_t>(sizes.layer + sizes.iter + sizes.projection));
  float* layer = target(set.layer, DNNL_ARG_WEIGHTS_LAYER, sizes.layer);
  float* iter = target(set.iter, DNNL_ARG_WEIGHTS_ITER, sizes.iter);
  float* projection = sizes.projection > 0
                          ? target(set.projection, DNNL_ARG_WEIGHTS_PROJECTION, sizes.projection)
                          : nullptr;
  gather_rnn_weights(
      p, g, group, flat,
      {layer, iter, projection, reinterpret_cast<float*>(set.at(out, DNNL_ARG_BIAS))});
  const dnnl::engine& e = cpu_engine();
  auto convert = [&](const WeightFormat& f, int arg, float* from) {
    if (!f.convert) return;
    dnnl::memory user(f.user, e, from), want(f.want, e, set.at(out, arg));
    f.convert->execute(cpu_stream(), user, want);
  };
  convert(set.layer, DNNL_ARG_WEIGHTS_LAYER, layer);
  convert(set.iter, DNNL_ARG_WEIGHTS_ITER, iter);
  if (projection != nullptr) convert(set.projection, DNNL_ARG_WEIGHTS_PROJECTION, projection);
  cpu_stream().wait();
}

// What a group's packed weights are kept under: its layers and the layout.
std::string weights_key(const RnnParam& p, const RnnGeometry& g, const RnnGroup& group,
                        const char* pass) {
  return GroupShape(p, g, group).key(pass) + make_key(group.first);
}

// The packed weights of a group: kept per content of the parameter array
// when it has a stamp, else packed into `scratch` for this call.
struct PackedWeights {
  std::shared_ptr<const AlignedBuffer> kept;
  std::byte* data = nullptr;
};
PackedWeights packed_weights(const RnnParam& p, const RnnGeometry& g, const RnnGroup& group,
                             const WeightSet& set, const std::string& key, const TensorRef& params,
                             std::byte* scratch) {
  const float* flat = params.ptr<float>();
  PackedWeights w;
  if (const auto stamp = content_stamp(params)) {
    w.kept = derived_from_content(*stamp, key, set.bytes(), [&](std::byte* out) {
      pack_weights(p, g, group, set, flat, out);
    });
    w.data = w.kept->data();
  } else {
    pack_weights(p, g, group, set, flat, scratch);
    w.data = scratch;
  }
  return w;
}

void add_weight_args(std::unordered_map<int, dnnl::memory>& args, const WeightSet& set,
                     std::byte* base) {
  const dnnl::engine& e = cpu_engine();
  args[DNNL_ARG_WEIGHTS_LAYER] = {set.layer.want, e, set.at(base, DNNL_ARG_WEIGHTS_LAYER)};
  args[DNNL_ARG_WEIGHTS_ITER] = {set.iter.want, e, set.at(base, DNNL_ARG_WEIGHTS_ITER)};
  if (!set.projection.want.is_zero())
    args[DNNL_ARG_WEIGHTS_PROJECTION] = {set.projection.want, e,
                                         set.at(base, DNNL_ARG_WEIGHTS_PROJECTION)};
  args[DNNL_ARG_BIAS] = {set.bias, e, set.at(base, DNNL_ARG_BIAS)};
}

// dst (req) = src, n elements.
void store(float* dst, const float* src, int64_t n, OpReq req) {
  if (req == OpReq::kNull || dst == src) return;
  parallel_for(n, 32768, [&](int64_t begin, int64_t end) {
    if (req == OpReq::kAdd)
      for (int64_t k = begin; k < end; ++k) dst[k] += src[k];
    else
      std::memcpy(dst + begin, src + begin, static_cast<size_t>(end - begin) * sizeof(float));
  });
}

void multiply(const float* x, const float* mask, float* y, int64_t n) {
  parallel_for(n, 32768, [&](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) y[k] = x[k] * mask[k];
  });
}

// The pieces of one call both passes share.
struct CallPlan {
  RnnGeometry g;
  std::vector<RnnGroup> groups;
  WorkspaceLayout layout;
  float* workspace;

  CallPlan(const RnnParam& p, const Shape& data, const TensorRef& ws, bool training)
      : g(p, data[0], data[1], data[2]),
        groups(rnn_groups(g, training)),
        layout(workspace_layout(p, g, groups, training)),
        workspace(ws.ptr<float>()) {
    MX_CHECK(ws.size() >= layout.total, "RNN: the workspace holds ", ws.size(),
             " values, oneDNN's pass needs ", layout.total);
  }
  float* at(int64_t offset) const { return workspace + offset; }
  // The input sequence of group k (the data, or the output below, masked in training).
  const float* group_input(const float* data, size_t k) const {
    if (k == 0) return data;
    const int64_t below = groups[k].first - 1;
    return layout.dropped[below] >= 0 ? at(layout.dropped[below]) : at(layout.out[k - 1]);
  }
};

// Whether oneDNN has every primitive the case needs (training and
// inference, forward and backward); decided once per shape, before any
// pass runs, so that a forward pass never takes a path the backward pass
// cannot follow.
bool usable(const RnnParam& p, const RnnGeometry& g) {
  const std::string key = GroupShape(p, g, {0, g.L, g.I}).key("usable") + make_key(g.dropout);
  static std::mutex mutex;
  static std::unordered_map<std::string, bool> known;
  {
    std::lock_guard lock(mutex);
    if (auto it = known.find(key); it != known.end()) return it->second;
  }
  bool ok = true;
  try {
    for (const RnnGroup& group : rnn_groups(g, true)) {
      forward_pass(GroupShape(p, g, group), true);
      backward_pass(GroupShape(p, g, group));
    }
    for (const RnnGroup& group : rnn_groups(g, false)) forward_pass(GroupShape(p, g, group), false);
  } catch (const dnnl::error&) {
    ok = false;
  }
  std::lock_guard lock(mutex);
  known[key] = ok;
  return ok;
}

dnnl::memory memory_at(const md& desc, const void* data) {
  return dnnl::memory(desc, cpu_engine(), const_cast<void*>(data));
}

// The arrays of a call the forward pass reads.
struct ForwardInputs {
  const float* data;
  const TensorRef* params;
  const float* hx;
  const float* cx;  // LSTM
};

// Runs group k's forward primitive: its output sequence and final states
// into the workspace (and, in training, oneDNN's workspace).
void forward_group(const CallPlan& plan, size_t k, const ForwardPass& f, const std::byte* weights,
                   const ForwardInputs& in, std::byte* scratchpad, bool training) {
  const RnnGeometry& g = plan.g;
  const GroupDescs& d = f.descs;
  const int64_t state = plan.groups[k].first * g.D;  // its first row of the state arrays
  std::unordered_map<int, dnnl::memory> args;
  args[DNNL_ARG_SRC_LAYER] = memory_at(d.src_layer, plan.group_input(in.data, k));
  args[DNNL_ARG_SRC_ITER] = memory_at(d.src_iter, in.hx + state * g.N * g.P);
  args[DNNL_ARG_DST_LAYER] = memory_at(d.dst_layer, plan.at(plan.layout.out[k]));
  args[DNNL_ARG_DST_ITER] = memory_at(d.dst_iter, plan.at(plan.layout.hy) + state * g.N * g.P);
  if (in.cx != nullptr) {
    args[DNNL_ARG_SRC_ITER_C] = memory_at(d.src_iter_c, in.cx + state * g.N * g.H);
    args[DNNL_ARG_DST_ITER_C] =
        memory_at(d.dst_iter_c, plan.at(plan.layout.cy) + state * g.N * g.H);
  }
  add_weight_args(args, f.weights, const_cast<std::byte*>(weights));
  if (training)
    args[DNNL_ARG_WORKSPACE] = memory_at(f.workspace, plan.at(plan.layout.workspace[k]));
  if (f.scratchpad.get_size() > 0) args[DNNL_ARG_SCRATCHPAD] = memory_at(f.scratchpad, scratchpad);
  f.primitive.execute(cpu_stream(), args);
  cpu_stream().wait();
}

// Every group's forward pass. In training the masks between layers are
// drawn from `rng`, or, without one (the pass run again before a second
// backward pass), taken as they are in the workspace.
void forward_groups(const RnnParam& p, const CallPlan& plan, const ForwardInputs& in, bool training,
                    std::mt19937_64* rng, const OpResources& res) {
  const RnnGeometry& g = plan.g;
  std::vector<std::shared_ptr<const ForwardPass>> passes;
  size_t scratchpad = 0, weights = 0;
  for (const RnnGroup& group : plan.groups) {
    passes.push_back(forward_pass(GroupShape(p, g, group), training));
    scratchpad = std::max(scratchpad, passes.back()->scratchpad.get_size());
    weights = std::max(weights, passes.back()->weights.bytes());
  }
  const bool stamped = content_stamp(*in.params).has_value();
  Arena arena;
  const size_t pad_at = arena.add(scratchpad);
  const size_t weights_at = arena.add(stamped ? 0 : weights);
  arena.take(res);
  omp_set_num_threads(dnnl_threads());
  const int64_t sequence = g.T * g.N * g.D * g.P;
  for (size_t k = 0; k < plan.groups.size(); ++k) {
    const RnnGroup& group = plan.groups[k];
    const ForwardPass& f = *passes[k];
    const PackedWeights w = packed_weights(
        p, g, group, f.weights, weights_key(p, g, group, training ? "w_train" : "w_infer"),
        *in.params, arena.at(weights_at));
    forward_group(plan, k, f, w.data, in, arena.at(pad_at), training);
    const int64_t last = group.first + group.count - 1;
    if (plan.layout.mask[last] < 0) continue;
    float* mask = plan.at(plan.layout.mask[last]);
    if (rng != nullptr)
      rnn::draw_dropout_mask(*rng, mask, sequence, 1.0 - static_cast<double>(p.p));
    multiply(plan.at(plan.layout.out[k]), mask, plan.at(plan.layout.dropped[last]), sequence);
  }
}

// Where a backward pass puts its results and finds its temporary buffers.
struct BackwardBuffers {
  std::byte* scratchpad;
  std::byte* weights;  // packed here without a stamp
  std::byte* diff;     // the weight gradients as oneDNN writes them
  float* plain;        // ... and in plain layouts
  float* dbias;
  const float* dhy;  // the final states' gradients (zeros without)
  const float* dcy;
  float* ddata;  // the inputs' gradients (scratch where not written directly)
  float* dhx;
  float* dcx;
  float* dparams;  // null: not wanted
  bool params_add;
};

// The group's weight gradients (oneDNN's layouts, accumulated from 0)
// as its backward primitive reads them.
void add_diff_weight_args(std::unordered_map<int, dnnl::memory>& args, const BackwardPass& b,
                          const BackwardBuffers& buf) {
  std::byte* at = buf.diff;
  auto diff = [&](int arg, const WeightFormat& f) {
    std::memset(at, 0, f.want.get_size());
    args[arg] = memory_at(f.want, at);
    at += f.bytes();
  };
  diff(DNNL_ARG_DIFF_WEIGHTS_LAYER, b.diff_layer);
  diff(DNNL_ARG_DIFF_WEIGHTS_ITER, b.diff_iter);
  if (!b.diff_projection.want.is_zero()) diff(DNNL_ARG_DIFF_WEIGHTS_PROJECTION, b.diff_projection);
  std::memset(buf.dbias, 0, b.descs.bias.get_size());
  args[DNNL_ARG_DIFF_BIAS] = memory_at(b.descs.bias, buf.dbias);
}

// The group's weight gradients into MXNet's flat vector.
void store_weight_gradients(const RnnParam& p, const CallPlan& plan, size_t k,
                            const BackwardPass& b, const BackwardBuffers& buf) {
  const RnnWeightSizes sizes = rnn_weight_sizes(plan.g, plan.groups[k], p.mode);
  std::byte* at = buf.diff;
  float* plain = buf.plain;
  auto to_plain = [&](const WeightFormat& f, int64_t n) -> const float* {
    std::byte* want = at;
    at += f.bytes();
    if (!f.convert) return reinterpret_cast<const float*>(want);
    dnnl::memory from = memory_at(f.want, want), to = memory_at(f.user, plain);
    f.convert->execute(cpu_stream(), from, to);
    plain += n;
    return plain - n;
  };
  const float* layer = to_plain(b.diff_layer, sizes.layer);
  const float* iter = to_plain(b.diff_iter, sizes.iter);
  const float* projection =
      sizes.projection > 0 ? to_plain(b.diff_projection, sizes.projection) : nullptr;
  cpu_stream().wait();
  scatter_rnn_gradients(p, plan.g, plan.groups[k], {layer, iter, projection, buf.dbias},
                        buf.dparams, buf.params_add);
}

// Runs group k's backward primitive from dy (its output's gradient) into
// dx (its input's), and the states' and weights' gradients.
void backward_group(const RnnParam& p, const CallPlan& plan, size_t k, const BackwardPass& b,
                    const std::byte* weights, const ForwardInputs& in, const float* dy, float* dx,
                    const BackwardBuffers& buf) {
  const RnnGeometry& g = plan.g;
  const GroupDescs& d = b.descs;
  const int64_t state = plan.groups[k].first * g.D;
  const int64_t hp = state * g.N * g.P, hc = state * g.N * g.H;
  std::unordered_map<int, dnnl::memory> args;
  args[DNNL_ARG_SRC_LAYER] = memory_at(d.src_layer, plan.group_input(in.data, k));
  args[DNNL_ARG_SRC_ITER] = memory_at(d.src_iter, in.hx + hp);
  args[DNNL_ARG_DST_LAYER] = memory_at(d.dst_layer, plan.at(plan.layout.out[k]));
  args[DNNL_ARG_DST_ITER] = memory_at(d.dst_iter, plan.at(plan.layout.hy) + hp);
  args[DNNL_ARG_DIFF_SRC_LAYER] = memory_at(d.src_layer, dx);
  args[DNNL_ARG_DIFF_SRC_ITER] = memory_at(d.src_iter, buf.dhx + hp);
  args[DNNL_ARG_DIFF_DST_LAYER] = memory_at(d.dst_layer, dy);
  args[DNNL_ARG_DIFF_DST_ITER] = memory_at(d.dst_iter, buf.dhy + hp);
  if (p.lstm()) {
    args[DNNL_ARG_SRC_ITER_C] = memory_at(d.src_iter_c, in.cx + hc);
    args[DNNL_ARG_DST_ITER_C] = memory_at(d.dst_iter_c, plan.at(plan.layout.cy) + hc);
    args[DNNL_ARG_DIFF_SRC_ITER_C] = memory_at(d.src_iter_c, buf.dcx + hc);
    args[DNNL_ARG_DIFF_DST_ITER_C] = memory_at(d.dst_iter_c, buf.dcy + hc);
  }
  add_weight_args(args, b.weights, const_cast<std::byte*>(weights));
  add_diff_weight_args(args, b, buf);
  args[DNNL_ARG_WORKSPACE] = memory_at(b.workspace, plan.at(plan.layout.workspace[k]));
  if (b.scratchpad.get_size() > 0)
    args[DNNL_ARG_SCRATCHPAD] = memory_at(b.scratchpad, buf.scratchpad);
  b.primitive.execute(cpu_stream(), args);
  cpu_stream().wait();
  if (buf.dparams != nullptr) store_weight_gradients(p, plan, k, b, buf);
}

// A gradient written directly where the request is write, else into
// scratch (added after, or dropped).
bool direct(OpReq req) { return req == OpReq::kWrite || req == OpReq::kInplace; }

// Every group's backward pass, from the top group down; `c`'s requests
// say where the inputs' gradients go.
void backward_groups(const RnnParam& p, const CallPlan& plan, const ForwardInputs& in,
                     const BackwardCall& c) {
  const RnnGeometry& g = plan.g;
  std::vector<std::shared_ptr<const BackwardPass>> passes;
  size_t scratchpad = 0, weights = 0, diff = 0, plain = 0, dbias = 0;
  for (const RnnGroup& group : plan.groups) {
    passes.push_back(backward_pass(GroupShape(p, g, group)));
    const BackwardPass& b = *passes.back();
    const RnnWeightSizes sizes = rnn_weight_sizes(g, group, p.mode);
    scratchpad = std::max(scratchpad, b.scratchpad.get_size());
    weights = std::max(weights, b.weights.bytes());
    diff = std::max(diff, b.diff_layer.bytes() + b.diff_iter.bytes() + b.diff_projection.bytes());
    plain = std::max(plain, static_cast<size_t>(sizes.layer + sizes.iter + sizes.projection));
    dbias = std::max(dbias, static_cast<size_t>(sizes.bias));
  }
  const int64_t sequence = g.T * g.N * g.D * g.P, fl = sizeof(float);
  const int64_t hp = g.states() * g.N * g.P, hc = g.states() * g.N * g.H;
  const bool dhy_given = p.state_outputs, dcy_given = p.state_outputs && p.lstm();
  Arena arena;
  const size_t at_pad = arena.add(scratchpad), at_diff = arena.add(diff);
  const size_t at_weights = arena.add(content_stamp(c.inputs[1]) ? 0 : weights);
  const size_t at_plain = arena.add(plain * fl), at_dbias = arena.add(dbias * fl);
  // Group k > 0 writes its input's gradient into dy_buffers[k % 2].
  const size_t at_dy0 = arena.add(plan.groups.size() > 2 ? sequence * fl : 0);
  const size_t at_dy1 = arena.add(plan.groups.size() > 1 ? sequence * fl : 0);
  const size_t at_dhy = arena.add(dhy_given ? 0 : hp * fl);
  const size_t at_dcy = arena.add(p.lstm() && !dcy_given ? hc * fl : 0);
  const size_t at_ddata = arena.add(direct(c.req[0]) ? 0 : g.T * g.N * g.I * fl);
  const size_t at_dhx = arena.add(direct(c.req[2]) ? 0 : hp * fl);
  const size_t at_dcx = arena.add(p.lstm() && !direct(c.req[3]) ? hc * fl : 0);
  arena.take(c.resources);

  BackwardBuffers buf{};
  buf.scratchpad = arena.at(at_pad);
  buf.weights = arena.at(at_weights);
  buf.diff = arena.at(at_diff);
  buf.plain = arena.at<float>(at_plain);
  buf.dbias = arena.at<float>(at_dbias);
  auto zeros = [&](size_t at, int64_t n) {
    std::memset(arena.at(at), 0, static_cast<size_t>(n) * sizeof(float));
    return arena.at<const float>(at);
  };
  buf.dhy = dhy_given ? c.out_grads[1].ptr<float>() : zeros(at_dhy, hp);
  if (p.lstm()) buf.dcy = dcy_given ? c.out_grads[2].ptr<float>() : zeros(at_dcy, hc);
  auto target = [&](size_t input, size_t scratch) {
    return direct(c.req[input]) ? c.in_grads[input].ptr<float>() : arena.at<float>(scratch);
  };
  buf.ddata = target(0, at_ddata);
  buf.dhx = target(2, at_dhx);
  if (p.lstm()) buf.dcx = target(3, at_dcx);
  if (c.req[1] != OpReq::kNull) {
    buf.dparams = c.in_grads[1].ptr<float>();
    buf.params_add = c.req[1] == OpReq::kAdd;
  }

  omp_set_num_threads(dnnl_threads());
  float* dy_buffers[2] = {arena.at<float>(at_dy0), arena.at<float>(at_dy1)};
  const float* dy = c.out_grads[0].ptr<float>();
  for (size_t k = plan.groups.size(); k-- > 0;) {
    const RnnGroup& group = plan.groups[k];
    const BackwardPass& b = *passes[k];
    const PackedWeights w = packed_weights(
        p, g, group, b.weights, weights_key(p, g, group, "w_bwd"), c.inputs[1], buf.weights);
    float* dx = k == 0 ? buf.ddata : dy_buffers[k % 2];
    backward_group(p, plan, k, b, w.data, in, dy, dx, buf);
    // The layer below's output went through a mask (dropout in training).
    if (k > 0 && plan.layout.mask[group.first - 1] >= 0)
      multiply(dx, plan.at(plan.layout.mask[group.first - 1]), dx, sequence);
    dy = dx;
  }
  auto finish = [&](size_t input, const float* scratch, int64_t n) {
    if (!direct(c.req[input])) store(c.in_grads[input].ptr<float>(), scratch, n, c.req[input]);
  };
  finish(0, buf.ddata, g.T * g.N * g.I);
  finish(2, buf.dhx, hp);
  if (p.lstm()) finish(3, buf.dcx, hc);
}

ForwardInputs forward_inputs(const RnnParam& p, const std::vector<TensorRef>& inputs) {
  return {inputs[0].ptr<float>(), &inputs[1], inputs[2].ptr<float>(),
          p.lstm() ? inputs[3].ptr<float>() : nullptr};
}

}  // namespace

bool rnn_supported(const RnnParam& p) { return !p.use_sequence_length && !p.clips(); }

std::vector<RnnGroup> rnn_groups(const RnnGeometry& g, bool training) {
  std::vector<RnnGroup> groups;
  const bool one_per_layer = g.D == 2 || (training && g.dropout);
  for (int64_t l = 0; l < g.L; ++l) {
    const int64_t input = g.layer_input(l);
    const bool joins =
        !one_per_layer && !groups.empty() && groups.back().input == input && input == g.D * g.P;
    if (joins)
      ++groups.back().count;
    else
      groups.push_back({l, 1, input});
  }
  return groups;
}

int64_t rnn_workspace_size(const RnnParam& p, const RnnGeometry& g) {
  if (!rnn_supported(p)) return 0;
  try {
    return workspace_layout(p, g, rnn_groups(g, true), true).total;
  } catch (const dnnl::error&) {
    return 0;  // no primitive for the case: the reference kernels run it
  }
}

}  // namespace mx::op::dnnl_impl

namespace mx::op::dnnl_impl {

bool rnn_forward(const RnnParam& p, const ForwardCall& c) {
  const Shape& data = c.inputs[0].shape;
  if (!rnn_supported(p) || !usable(p, RnnGeometry(p, data[0], data[1], data[2]))) return false;
  const CallPlan plan(p, data, c.outputs.back(), c.is_train);
  forward_groups(p, plan, forward_inputs(p, c.inputs), c.is_train, &c.resources.rng(), c.resources);
  // An inference pass leaves no oneDNN workspace: a backward pass after it
  // runs the training pass first, as after a backward pass.
  *plan.at(plan.layout.consumed) = c.is_train ? 0.0f : 1.0f;
  const RnnGeometry& g = plan.g;
  store(c.outputs[0].ptr<float>(), plan.at(plan.layout.out.back()), g.T * g.N * g.D * g.P,
        c.req[0]);
  if (p.state_outputs) {
    store(c.outputs[1].ptr<float>(), plan.at(plan.layout.hy), g.states() * g.N * g.P, c.req[1]);
    if (p.lstm())
      store(c.outputs[2].ptr<float>(), plan.at(plan.layout.cy), g.states() * g.N * g.H, c.req[2]);
  }
  return true;
}

bool rnn_backward(const RnnParam& p, const BackwardCall& c) {
  const Shape& data = c.inputs[0].shape;
  if (!rnn_supported(p) || !usable(p, RnnGeometry(p, data[0], data[1], data[2]))) return false;
  const CallPlan plan(p, data, c.outputs.back(), true);
  const ForwardInputs in = forward_inputs(p, c.inputs);
  float* consumed = plan.at(plan.layout.consumed);
  // oneDNN's backward pass overwrote its workspace: run the forward pass
  // again (with the masks it drew) for a second backward pass.
  if (*consumed != 0.0f) forward_groups(p, plan, in, true, nullptr, c.resources);
  backward_groups(p, plan, in, c);
  *consumed = 1.0f;
  return true;
}

}  // namespace mx::op::dnnl_impl

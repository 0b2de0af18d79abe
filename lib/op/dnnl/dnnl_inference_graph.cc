#include "op/dnnl/dnnl_inference_graph.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <iterator>
#include <mutex>
#include <optional>
#include <utility>

#include "base/error.h"
#include "base/strings.h"
#include "op/dnnl/dnnl_context.h"
#include "op/dnnl/dnnl_descs.h"
#include "op/fusion_plan.h"
#include "op/workspace_slots.h"

namespace mx::op::dnnl_impl {
namespace {

using prop = dnnl::prop_kind;
using md = dnnl::memory::desc;
using dt = dnnl::memory::data_type;

constexpr size_t kAlign = 64;
size_t aligned(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

// The oneDNN function of each fusable activation kind (activation_table.h).
dnnl::algorithm eltwise_algorithm(ActType a) {
  switch (a) {
    case ActType::kRelu: return dnnl::algorithm::eltwise_relu;
    case ActType::kSigmoid: return dnnl::algorithm::eltwise_logistic;
    case ActType::kTanh: return dnnl::algorithm::eltwise_tanh;
    case ActType::kSoftRelu: return dnnl::algorithm::eltwise_soft_relu;
    case ActType::kSoftSign: break;
  }
  throw Error(str("activation '", activation_kind(a).name,
                  "' is marked fusable in activation_table.h but has no oneDNN algorithm"));
}

// Row-major: images (N, C, H, W) and FullyConnected data (N, features).
tag plain_tag(int ndim) { return ndim == 2 ? tag::nc : tag::nchw; }

dims dims_of(const Shape& s) {
  dims d;
  for (int i = 0; i < s.ndim(); ++i) d.push_back(s[i]);
  return d;
}

bool is_int8(dt t) { return t == dt::u8 || t == dt::s8; }

// `d` holding elements of type `t` (same dimensions and layout).
md with_type(const md& d, dt t) {
  md out = d;
  out.data.data_type = static_cast<dnnl_data_type_t>(t);
  return out;
}

// How a value of calibrated range `r` is held in int8: unsigned when it
// has no negative elements (and `may_be_unsigned`), else signed and
// symmetric, as MXNet's quantize_v2 does. Stored = real * scale.
struct Int8Form {
  dt type;
  float scale;
};
Int8Form int8_form(const ValueRange& r, bool may_be_unsigned = true) {
  if (may_be_unsigned && r.min >= 0) return {dt::u8, r.max > 0 ? 255.0f / r.max : 1.0f};
  const float magnitude = std::max(std::fabs(r.min), std::fabs(r.max));
  return {dt::s8, magnitude > 0 ? 127.0f / magnitude : 1.0f};
}

// A reorder from `from` to `to` that multiplies by `scale` (a change of
// int8 scale, a quantization or a dequantization).
dnnl::reorder scaled_reorder(const md& from, const md& to, float scale) {
  dnnl::primitive_attr attr;
  if (scale != 1.0f) attr.set_output_scales(0, {scale});
  return dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), from, cpu_engine(), to, attr));
}

// Bytes that stay 64-byte aligned and live across runs (prepared weights).
class AlignedBuffer {
 public:
  void* reserve(size_t bytes) {
    if (bytes_.size() < bytes + kAlign) bytes_.resize(bytes + kAlign);
    return data();
  }
  void* data() {
    auto address = reinterpret_cast<uintptr_t>(bytes_.data());
    return bytes_.data() + (aligned(address) - address);
  }

 private:
  std::vector<std::byte> bytes_;
};

}  // namespace

struct DnnlInferenceGraph::Impl {
  // One tensor of the graph: a graph input (read where the caller has it, in
  // plain layout) or an intermediate in the workspace.
  struct Value {
    md desc;
    float scale = 1;  // int8 values: stored = real * scale
    int input = -1;   // the graph input it is
    int slot = -1;    // workspace slot, once planned
    int last_use = -1;
  };
  // Where an argument of a primitive lives at run time.
  enum class Source { kValue, kWeights, kBias, kScaleShift, kInput, kOutput };
  struct Arg {
    int arg;
    Source source;
    int index;  // value, conv state, BatchNorm state, input or output
    md desc;
  };
  struct Exec {
    dnnl::primitive primitive;
    std::vector<Arg> args;
    std::vector<int> reads, writes;  // values
    int inplace_from = -1;           // writes[0] may take this value's slot when it dies here
    size_t scratchpad = 0;
  };
  // A convolution's (or inner product's) weights and bias as the primitive takes them: reordered,
  // with a following BatchNorm folded in, once per content of their sources.
  struct ConvState {
    int weight = -1, bias = -1;                      // graph inputs
    int gamma = -1, beta = -1, mean = -1, var = -1;  // of a folded BatchNorm
    bool fold = false, fix_gamma = true;
    double eps = 0;
    int64_t filters = 0;
    md plain_weights, weights;
    std::optional<dnnl::reorder> reorder;
    std::vector<std::optional<ContentStamp>> stamps;
    bool ready = false;
    AlignedBuffer reordered;
    std::vector<float> folded, folded_bias;
    const void *weights_at = nullptr, *bias_at = nullptr;
    // int8: the input's and output's scales (1 for a float output), and per
    // output channel the weights' scale, the bias in int32 units and the
    // output scale the primitive applies to its int32 sums.
    bool int8 = false;
    float in_scale = 1, out_scale = 1;
    std::vector<float> weight_scales, scaled_bias, output_scales;
    // oneDNN (2.x) takes int8 output scales only as constants of the
    // primitive: it is made again, in the planned layouts, when they change.
    int exec = -1;
    // The primitive for per-channel output scales, and its scratchpad bytes.
    std::function<std::pair<dnnl::primitive, size_t>(const std::vector<float>&)> with_scales;
  };
  struct BatchNormState {
    int gamma, beta;
    bool fix_gamma;
    std::vector<float> scale_shift;  // (2, channels): scale, then shift
  };

  FusedGraphDesc desc;
  std::vector<Value> values;
  std::vector<Shape> shapes;  // per graph value
  std::vector<Exec> execs;
  std::vector<ConvState> convs;
  std::vector<BatchNormState> batch_norms;
  std::vector<size_t> slot_offsets;
  size_t scratch_offset = 0;
  Stats stats;
  std::mutex mutex;
  AlignedBuffer own_workspace;  // when the caller has no TempSpace

  // The one layout of every convolution's input and output: mixing the
  // layouts each convolution prefers alone costs a reorder between layers.
  tag activation_tag = tag::any;

  FusionPlan plan;
  std::vector<std::tuple<int, md, float, int>> reordered_values;  // (value, layout, scale, copy)
  std::vector<std::vector<int>> readers;  // per value: the layers that read it
  std::vector<int> owner;                 // per layer: the convolution that absorbs it, or -1

  explicit Impl(const FusedGraphDesc& d) : desc(d), plan(desc) {
    const int n = d.num_values();
    values.resize(static_cast<size_t>(n));
    shapes.resize(static_cast<size_t>(n));
    for (size_t i = 0; i < d.inputs.size(); ++i) {
      values[i].input = static_cast<int>(i);
      shapes[i] = d.inputs[i];
      if (d.inputs[i].ndim() == 4 || d.inputs[i].ndim() == 2)
        values[i].desc = plain(dims_of(d.inputs[i]), plain_tag(d.inputs[i].ndim()));
    }
    for (size_t l = 0; l < d.layers.size(); ++l)
      shapes[static_cast<size_t>(d.value_of_layer(l))] = output_shape(d.layers[l]);
    readers.resize(static_cast<size_t>(n));
    owner.assign(d.layers.size(), -1);
    for (size_t l = 0; l < d.layers.size(); ++l) {
      for (int v : d.layers[l].inputs)
        readers[static_cast<size_t>(v)].push_back(static_cast<int>(l));
      for (int p : plan.of(static_cast<int>(l)).post_ops)
        owner[static_cast<size_t>(p)] = static_cast<int>(l);
    }
    activation_tag = preferred_activation_tag();
    for (size_t l = 0; l < d.layers.size(); ++l) emit_turn(static_cast<int>(l));
    plan_workspace();
  }

  // A tensor of the graph's compute type (bfloat16 or float32, as the desc
  // says), in layout `format` (`any`: oneDNN's choice).
  dt compute_type() const { return desc.bfloat16 ? dt::bf16 : dt::f32; }
  md computed(const dims& shape, tag format) const { return md(shape, compute_type(), format); }

  // The element types of a convolution: the compute type, or for an int8
  // layer int8 input and weights and an int8 or float output.
  struct ConvTypes {
    dt src, weights, dst;
    float src_scale = 1, dst_scale = 1;
    // The type the sum post-op reads its addend in, where it differs from
    // dst: an s8 addend (a shortcut's signed values) added into a u8 output
    // (non-negative after the ReLU), so that the residual stream keeps 8 bits.
    dt sum = dt::undef;
  };

  // A convolution's descriptors, for inference: Winograd as ConvDescs
  // chose it, in float32 only (oneDNN has no bfloat16 or int8 Winograd kernel).
  ConvDescs conv_descs(const ConvGeom& g, bool int8) const {
    ConvDescs cd(g, /*keeps_weights=*/true);
    if (desc.bfloat16 || int8) cd.algorithm = dnnl::algorithm::convolution_direct;
    return cd;
  }

  // The convolution from `src` to `dst`, weights in oneDNN's layout, bias as given.
  dnnl::convolution_forward::primitive_desc conv_pd(const ConvDescs& c, const md& src,
                                                    const md& dst, bool with_bias,
                                                    const dnnl::primitive_attr& attr,
                                                    dt weights_type) const {
    using pd_t = dnnl::convolution_forward::primitive_desc;
    const md weights(c.weights, weights_type, tag::any);
    if (with_bias)
      return pd_t({prop::forward_inference, c.algorithm, src, weights, plain(c.bias, tag::x), dst,
                   c.strides, c.dilates, c.pad_l, c.pad_r},
                  attr, cpu_engine());
    return pd_t({prop::forward_inference, c.algorithm, src, weights, dst, c.strides, c.dilates,
                 c.pad_l, c.pad_r},
                attr, cpu_engine());
  }

  const FusedLayer& layer(int l) const { return desc.layers[static_cast<size_t>(l)]; }
  int value_of(int l) const { return desc.value_of_layer(static_cast<size_t>(l)); }
  int data_of(int l) const { return layer(l).inputs[0]; }

  Shape output_shape(const FusedLayer& f) const {
    const InferenceLayer& l = f.layer;
    switch (l.kind) {
      case LayerKind::kConvolution:
        return Shape{l.conv.batch, l.conv.filters, l.conv.out_height, l.conv.out_width};
      case LayerKind::kPooling:
        return Shape{l.pool.batch, l.pool.channels, l.pool.out_height, l.pool.out_width};
      case LayerKind::kFullyConnected: return Shape{l.fc.batch, l.fc.outputs};
      default: return shapes[static_cast<size_t>(f.inputs[0])];
    }
  }

  // The layout most of the convolutions' work prefers (by FLOPs), each
  // asked alone with every layout left to oneDNN. A Winograd convolution
  // votes with 4 times its FLOPs: outside its blocked layout it runs the
  // direct algorithm at half its speed, while direct convolutions lose
  // little between layouts (ResNet-50 at batch 16: nhwc and nChw16c within
  // 5%; with Winograd in nChw16c 1.3x faster, docs/benchmarks.md).
  tag preferred_activation_tag() const {
    const tag candidates[] = {tag::nhwc, tag::nChw16c, tag::nChw8c, tag::nchw};
    double weight[std::size(candidates)] = {};
    for (const FusedLayer& f : desc.layers) {
      if (f.layer.kind != LayerKind::kConvolution) continue;
      const ConvGeom& g = f.layer.conv;
      const ConvDescs cd = conv_descs(g, f.int8);
      // An int8 layer asked with the types most of them have (unsigned after a ReLU).
      const dt data = f.int8 ? dt::u8 : compute_type();
      const auto pd = within_winograd_budget(cd, [&](const ConvDescs& c) {
        return conv_pd(c, md(c.src, data, tag::any), md(c.dst, data, tag::any), f.layer.conv_bias,
                       scratch_attr(), f.int8 ? dt::s8 : compute_type());
      });
      const double votes = is_winograd(pd) ? 4 : 1;
      const double flops = static_cast<double>(g.batch * g.filters * g.out_plane()) *
                           static_cast<double>(g.group_rows()) * votes;
      for (size_t c = 0; c < std::size(candidates); ++c)
        if (pd.src_desc() == md(cd.src, data, candidates[c])) weight[c] += flops;
    }
    size_t best = 0;
    for (size_t c = 1; c < std::size(candidates); ++c)
      if (weight[c] > weight[best]) best = c;
    return weight[best] > 0 ? candidates[best] : tag::any;
  }

  int add_value(const md& layout, float scale = 1) {
    values.push_back({layout, scale, -1, -1, -1});
    return static_cast<int>(values.size()) - 1;
  }

  Exec& add_exec(dnnl::primitive primitive, size_t scratchpad) {
    Exec e;
    e.primitive = std::move(primitive);
    e.scratchpad = scratchpad;
    execs.push_back(std::move(e));
    return execs.back();
  }

  // v in layout and type `want` (at `scale` when int8): v itself, or a
  // copy reordered once and shared by every layer that wants it so.
  int as_layout(int v, const md& want, float scale = 1) {
    const Value& from = values[static_cast<size_t>(v)];
    if (from.desc == want && (from.scale == scale || !is_int8(want.data_type()))) return v;
    for (const auto& [source, layout, s, copy] : reordered_values)
      if (source == v && layout == want && s == scale) return copy;
    const int copy = add_value(want, is_int8(want.data_type()) ? scale : 1);
    add_reorder(v, copy);
    reordered_values.emplace_back(v, want, scale, copy);
    return copy;
  }

  // v in the compute type (an int8 value dequantized), in its layout.
  int as_computed(int v) {
    const md& d = values[static_cast<size_t>(v)].desc;
    return is_int8(d.data_type()) ? as_layout(v, with_type(d, compute_type())) : v;
  }

  void add_reorder(int from, int to) {
    add_reorder(from, to, values[static_cast<size_t>(to)].desc,
                values[static_cast<size_t>(to)].scale);
  }

  // The same into value `to`'s buffer seen as `b`, at scale `to_scale`.
  void add_reorder(int from, int to, const md& b, float to_scale) {
    const md& a = values[static_cast<size_t>(from)].desc;
    // A value read before the layer that makes it ran would show here as
    // an empty layout: a planning bug, not bad input.
    MX_CHECK(a.dims() == b.dims(), "fused inference graph: value ", from,
             " is read before it is made");
    Exec& e = add_exec(scaled_reorder(a, b, to_scale / values[static_cast<size_t>(from)].scale), 0);
    e.args = {{DNNL_ARG_FROM, Source::kValue, from, a}, {DNNL_ARG_TO, Source::kValue, to, b}};
    e.reads = {from};
    e.writes = {to};
    ++stats.reorders;
  }

  // Hands value v back as output k (plain layout) right after it is made.
  void emit_outputs_of(int v) {
    for (size_t k = 0; k < desc.outputs.size(); ++k) {
      if (desc.outputs[k] != v) continue;
      const md& from = values[static_cast<size_t>(v)].desc;
      const Shape& shape = shapes[static_cast<size_t>(v)];
      const md to = plain(dims_of(shape), plain_tag(shape.ndim()));
      Exec& e = add_exec(scaled_reorder(from, to, 1 / values[static_cast<size_t>(v)].scale), 0);
      e.args = {{DNNL_ARG_FROM, Source::kValue, v, from},
                {DNNL_ARG_TO, Source::kOutput, static_cast<int>(k), to}};
      e.reads = {v};
      ++stats.reorders;
    }
  }

  int graph_input(int l, size_t position) const {
    const int v = layer(l).inputs.at(position);
    if (v >= static_cast<int>(desc.inputs.size()))
      throw Error(str("fused inference graph: parameter ", position, " of '", layer(l).name,
                      "' is computed inside the graph"));
    return v;
  }

  // Runs every primitive whose turn is layer `turn`.
  void emit_turn(int turn) {
    for (int l = 0; l < static_cast<int>(desc.layers.size()); ++l) {
      if (plan.of(l).absorbed || plan.of(l).last != turn) continue;
      const int out = value_of(plan.of(l).last);
      switch (layer(l).layer.kind) {
        case LayerKind::kConvolution: emit_convolution(l, out); break;
        case LayerKind::kBatchNorm: emit_batch_norm(l, out); break;
        case LayerKind::kActivation: emit_activation(l); break;
        case LayerKind::kPooling: emit_pooling(l); break;
        case LayerKind::kAdd: emit_add(l); break;
        case LayerKind::kFullyConnected: emit_fully_connected(l, out); break;
      }
      emit_outputs_of(out);
    }
  }

  bool is_output(int v) const {
    return std::find(desc.outputs.begin(), desc.outputs.end(), v) != desc.outputs.end();
  }

  // Whether value v is worth keeping in int8: an int8 convolution reads it
  // (as its input or its addition's addend), or a pooling layer whose
  // output is.
  bool read_in_int8(int v) const {
    for (int r : readers[static_cast<size_t>(v)]) {
      const FusedLayer& reader = layer(r);
      switch (reader.layer.kind) {
        case LayerKind::kConvolution:
        case LayerKind::kFullyConnected:
          if (reader.int8 && reader.inputs[0] == v) return true;
          break;
        case LayerKind::kPooling:
          if (read_in_int8(value_of(r))) return true;
          break;
        case LayerKind::kAdd: {
          const int conv = owner[static_cast<size_t>(r)];
          if (conv >= 0 && layer(conv).int8) return true;
          break;
        }
        default: break;
      }
    }
    return false;
  }

  // The types of convolution (or FullyConnected) l, whose primitive makes
  // value `out`. An int8
  // layer takes its input as int8 (quantized by its calibrated range when it
  // is not int8 already) and makes int8 when the value has a range, is read
  // in int8 and is not handed back, and its activations are ReLUs (which
  // commute with the output scale).
  ConvTypes layer_types(int l, int out) const {
    ConvTypes t{compute_type(), compute_type(), compute_type()};
    if (!layer(l).int8) return t;
    t.weights = dt::s8;
    const int data = data_of(l);
    const Value& in = values[static_cast<size_t>(data)];
    if (is_int8(in.desc.data_type())) {
      t.src = in.desc.data_type();
      t.src_scale = in.scale;
    } else {
      const auto range = desc.range_of(data);
      if (!range)
        throw Error("fused inference graph: the input of int8 layer '" + layer(l).name +
                    "' has no calibrated range");
      const Int8Form form = int8_form(*range);
      t.src = form.type;
      t.src_scale = form.scale;
    }
    const LayerFusion& f = plan.of(l);
    const auto range = desc.range_of(out);
    if (!range || is_output(out) || !read_in_int8(out)) return t;
    for (int p : f.post_ops)
      if (layer(p).layer.kind == LayerKind::kActivation &&
          layer(p).layer.activation != ActType::kRelu)
        return t;
    // The addition reads its addend in the output's type, or an s8 addend
    // as s8 (ConvTypes::sum); any other signed addend (float32) is copied
    // into the output first, which then has to be signed.
    bool signed_addend = false, s8_addend = false;
    if (f.addend >= 0) {
      const auto addend = desc.range_of(f.addend);
      s8_addend = values[static_cast<size_t>(f.addend)].desc.data_type() == dt::s8;
      signed_addend = !s8_addend && (!addend || addend->min < 0);
    }
    const Int8Form form = int8_form(*range, !signed_addend);
    t.dst = form.type;
    t.dst_scale = form.scale;
    if (s8_addend && t.dst == dt::u8) t.sum = dt::s8;
    return t;
  }

  void emit_convolution(int l, int out) {
    const LayerFusion& f = plan.of(l);
    const InferenceLayer& spec = layer(l).layer;
    const bool int8 = layer(l).int8;
    const ConvDescs cd = conv_descs(spec.conv, int8);
    const bool fold = f.fold_batch_norm >= 0;
    const bool with_bias = spec.conv_bias || fold;
    const ConvTypes types = layer_types(l, out);
    int sum_value = -1;
    for (int p : f.post_ops) {
      if (layer(p).layer.kind == LayerKind::kAdd) {
        sum_value = f.addend;
        ++stats.fused_additions;
      } else {
        ++stats.fused_activations;
      }
    }
    // Until the weights are known (prepare_weights), int8 output scales of 1.
    const std::vector<float> unit_scales(static_cast<size_t>(spec.conv.filters), 1.0f);
    auto attributes = [&](float sum_scale) {
      return conv_attributes(l, sum_scale, int8 ? &unit_scales : nullptr, types.sum);
    };
    // The addend is added where it is when it dies here in the output's
    // layout and type and is not the convolution's own input (y = conv(x) +
    // x); else it is copied into the output first, at the output's scale.
    const float inplace_scale =
        sum_value >= 0 ? types.dst_scale / values[static_cast<size_t>(sum_value)].scale : 1.0f;
    float sum_scale = inplace_scale;
    auto pd = convolution_pd(l, cd, types, with_bias, attributes(sum_scale));
    const int src = as_layout(data_of(l), pd.src_desc(), types.src_scale);
    const int turn = f.last;
    int inplace_from = -1;
    // The output's buffer as the sum reads it (s8 where ConvTypes::sum says).
    const md sum_desc =
        types.sum == dt::undef ? pd.dst_desc() : with_type(pd.dst_desc(), types.sum);
    if (sum_value >= 0) {
      if (sum_value != src && plan.dies_at(sum_value, turn) &&
          values[static_cast<size_t>(sum_value)].desc == sum_desc)
        inplace_from = sum_value;
      else if (inplace_scale != 1.0f && types.sum == dt::undef)
        pd = convolution_pd(l, cd, types, with_bias, attributes(sum_scale = 1.0f));
    }
    values[static_cast<size_t>(out)].desc = pd.dst_desc();
    values[static_cast<size_t>(out)].scale = types.dst_scale;
    if (sum_value >= 0 && inplace_from < 0) {
      if (types.sum == dt::undef)
        add_reorder(sum_value, out);
      else  // copied at its own scale, as s8: the sum post-op rescales it
        add_reorder(sum_value, out, sum_desc, values[static_cast<size_t>(sum_value)].scale);
    }

    ConvState state = weights_state(l, spec.conv_bias, spec.conv.filters,
                                    plain(cd.weights, cd.weights_tag), pd.weights_desc(), types);
    if (fold) {
      const int bn = f.fold_batch_norm;
      state.fold = true;
      state.gamma = graph_input(bn, 1);
      state.beta = graph_input(bn, 2);
      state.mean = graph_input(bn, 3);
      state.var = graph_input(bn, 4);
      state.fix_gamma = layer(bn).layer.bn_fix_gamma;
      state.eps = layer(bn).layer.bn_eps;
      ++stats.folded_batch_norms;
    }
    const md bias_desc = plain(cd.bias, tag::x);
    if (with_bias && pd.bias_desc() != bias_desc)
      throw Error("fused inference graph: oneDNN asks for a blocked bias layout");
    convs.push_back(std::move(state));
    const int conv_index = static_cast<int>(convs.size()) - 1;
    ++stats.convolutions;
    if (int8) ++stats.int8_convolutions;
    if (is_winograd(pd)) ++stats.winograd_convolutions;

    Exec& e = add_exec(dnnl::convolution_forward(pd), pd.scratchpad_desc().get_size());
    e.args = {{DNNL_ARG_SRC, Source::kValue, src, pd.src_desc()},
              {DNNL_ARG_WEIGHTS, Source::kWeights, conv_index, pd.weights_desc()},
              {DNNL_ARG_DST, Source::kValue, out, pd.dst_desc()}};
    if (with_bias) e.args.push_back({DNNL_ARG_BIAS, Source::kBias, conv_index, bias_desc});
    if (int8) {
      ConvState& c = convs.back();
      c.exec = static_cast<int>(execs.size()) - 1;
      c.with_scales = [this, l, cd, with_bias, sum_scale, sum_type = types.sum,
                       src_desc = pd.src_desc(), weights_desc = pd.weights_desc(), bias_desc,
                       dst_desc = pd.dst_desc()](const std::vector<float>& scales) {
        using desc_t = dnnl::convolution_forward::desc;
        const auto d = with_bias
                           ? desc_t(prop::forward_inference, cd.algorithm, src_desc, weights_desc,
                                    bias_desc, dst_desc, cd.strides, cd.dilates, cd.pad_l, cd.pad_r)
                           : desc_t(prop::forward_inference, cd.algorithm, src_desc, weights_desc,
                                    dst_desc, cd.strides, cd.dilates, cd.pad_l, cd.pad_r);
        const dnnl::convolution_forward::primitive_desc scaled(
            d, conv_attributes(l, sum_scale, &scales, sum_type), cpu_engine());
        return std::pair{dnnl::primitive(dnnl::convolution_forward(scaled)),
                         scaled.scratchpad_desc().get_size()};
      };
    }
    e.reads = {src};
    if (sum_value >= 0) e.reads.push_back(inplace_from >= 0 ? sum_value : out);
    e.writes = {out};
    e.inplace_from = inplace_from;
  }

  // The weights (input 1) and bias (input 2) of layer l: `plain` as the
  // caller has them, `prepared` as its primitive takes them.
  ConvState weights_state(int l, bool with_bias, int64_t filters, const md& plain,
                          const md& prepared, const ConvTypes& types) const {
    ConvState state;
    state.weight = graph_input(l, 1);
    if (with_bias) state.bias = graph_input(l, 2);
    state.filters = filters;
    state.plain_weights = plain;
    state.weights = prepared;
    state.int8 = layer(l).int8;
    state.in_scale = types.src_scale;
    state.out_scale = types.dst_scale;
    // int8 weights are reordered with their scales, once these are known.
    if (prepared != plain && !state.int8)
      state.reorder =
          dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), plain, cpu_engine(), prepared));
    return state;
  }

  // A FullyConnected layer of 2-D data (after a Flatten): oneDNN's inner
  // product, with the activation after it as a post-op; int8 as a
  // convolution is (layer_types, quantize_weights).
  void emit_fully_connected(int l, int out) {
    const InferenceLayer& spec = layer(l).layer;
    const bool int8 = layer(l).int8;
    const ConvTypes types = layer_types(l, out);
    stats.fused_activations += static_cast<int>(plan.of(l).post_ops.size());
    const dims weight_dims{spec.fc.outputs, spec.fc.inputs};
    const md src({spec.fc.batch, spec.fc.inputs}, types.src, tag::nc);
    const md dst({spec.fc.batch, spec.fc.outputs}, types.dst, tag::nc);
    const md bias = plain({spec.fc.outputs}, tag::x);
    const bool with_bias = spec.fc.bias;
    auto make = [this, l, src, dst, bias, with_bias](const md& weights,
                                                     const std::vector<float>* scales) {
      using desc_t = dnnl::inner_product_forward::desc;
      const auto d = with_bias ? desc_t(prop::forward_inference, src, weights, bias, dst)
                               : desc_t(prop::forward_inference, src, weights, dst);
      return dnnl::inner_product_forward::primitive_desc(d, conv_attributes(l, 1.0f, scales),
                                                         cpu_engine());
    };
    const std::vector<float> unit_scales(static_cast<size_t>(spec.fc.outputs), 1.0f);
    const auto pd = make(md(weight_dims, types.weights, tag::any), int8 ? &unit_scales : nullptr);
    const int in = as_layout(data_of(l), pd.src_desc(), types.src_scale);
    values[static_cast<size_t>(out)].desc = pd.dst_desc();
    values[static_cast<size_t>(out)].scale = types.dst_scale;

    ConvState state = weights_state(l, with_bias, spec.fc.outputs, plain(weight_dims, tag::oi),
                                    pd.weights_desc(), types);
    if (with_bias && pd.bias_desc() != bias)
      throw Error("fused inference graph: oneDNN asks for a blocked bias layout");
    convs.push_back(std::move(state));
    const int index = static_cast<int>(convs.size()) - 1;
    ++stats.fully_connected;
    if (int8) ++stats.int8_fully_connected;
    Exec& e = add_exec(dnnl::inner_product_forward(pd), pd.scratchpad_desc().get_size());
    e.args = {{DNNL_ARG_SRC, Source::kValue, in, pd.src_desc()},
              {DNNL_ARG_WEIGHTS, Source::kWeights, index, pd.weights_desc()},
              {DNNL_ARG_DST, Source::kValue, out, pd.dst_desc()}};
    if (with_bias) e.args.push_back({DNNL_ARG_BIAS, Source::kBias, index, bias});
    e.reads = {in};
    e.writes = {out};
    if (int8) {
      ConvState& c = convs.back();
      c.exec = static_cast<int>(execs.size()) - 1;
      c.with_scales = [make, weights = pd.weights_desc()](const std::vector<float>& scales) {
        const auto scaled = make(weights, &scales);
        return std::pair{dnnl::primitive(dnnl::inner_product_forward(scaled)),
                         scaled.scratchpad_desc().get_size()};
      };
    }
  }

  // The post-ops of convolution l (its activations, and its addition with
  // the addend's values times `sum_scale`), and per output channel the
  // scales of an int8 convolution's output.
  dnnl::primitive_attr conv_attributes(int l, float sum_scale,
                                       const std::vector<float>* output_scales,
                                       dt sum_type = dt::undef) const {
    dnnl::post_ops post;
    for (int p : plan.of(l).post_ops) {
      const FusedLayer& n = layer(p);
      if (n.layer.kind == LayerKind::kAdd)
        post.append_sum(sum_scale, sum_type);
      else
        post.append_eltwise(1.0f, eltwise_algorithm(n.layer.activation), 0.0f, 0.0f);
    }
    dnnl::primitive_attr attr = scratch_attr();
    attr.set_post_ops(post);
    if (output_scales != nullptr) attr.set_output_scales(1 << 1, *output_scales);
    return attr;
  }

  // The convolution in the graph's activation layout (its input as given
  // when that is a graph input), or in the layouts oneDNN picks when it has
  // no implementation for that.
  dnnl::convolution_forward::primitive_desc convolution_pd(int l, const ConvDescs& cd,
                                                           const ConvTypes& types, bool with_bias,
                                                           const dnnl::primitive_attr& attr) const {
    // Winograd where ConvDescs chose it and oneDNN takes it here
    // (within_winograd_budget), else the direct algorithm.
    auto make = [&](const md& src, const md& dst) {
      return within_winograd_budget(cd, [&](const ConvDescs& c) {
        return conv_pd(c, src, dst, with_bias, attr, types.weights);
      });
    };
    // oneDNN's reference implementation is orders of magnitude slower than a
    // reorder: a layout only it takes is not worth keeping.
    auto fast = [](const dnnl::convolution_forward::primitive_desc& pd) {
      return std::string(pd.impl_info_str()).rfind("ref", 0) != 0;
    };
    if (activation_tag != tag::any) {
      const md dst(cd.dst, types.dst, activation_tag);
      // The input in the graph's layout, else (a graph input, or an image's
      // few channels) in the one oneDNN picks.
      for (const md& src :
           {md(cd.src, types.src, activation_tag), md(cd.src, types.src, tag::any)}) {
        try {
          auto pd = make(src, dst);
          if (fast(pd) && (values[static_cast<size_t>(data_of(l))].input < 0 ||
                           src.data.format_kind == dnnl_format_kind_any))
            return pd;
        } catch (const dnnl::error&) {
          // no implementation for that layout
        }
      }
    }
    return make(md(cd.src, types.src, tag::any), md(cd.dst, types.dst, tag::any));
  }

  void emit_batch_norm(int l, int out) {
    const InferenceLayer& spec = layer(l).layer;
    const bool relu = !plan.of(l).post_ops.empty();
    const int src = as_computed(data_of(l));
    const md& layout = values[static_cast<size_t>(src)].desc;
    auto flags =
        dnnl::normalization_flags::use_global_stats | dnnl::normalization_flags::use_scale_shift;
    if (relu) {
      flags |= dnnl::normalization_flags::fuse_norm_relu;
      ++stats.fused_activations;
    }
    dnnl::batch_normalization_forward::primitive_desc pd(
        {prop::forward_inference, layout, static_cast<float>(spec.bn_eps), flags}, scratch_attr(),
        cpu_engine());
    values[static_cast<size_t>(out)].desc = pd.dst_desc();
    BatchNormState state{graph_input(l, 1), graph_input(l, 2), spec.bn_fix_gamma, {}};
    state.scale_shift.resize(2 * static_cast<size_t>(shapes[static_cast<size_t>(data_of(l))][1]));
    batch_norms.push_back(std::move(state));
    Exec& e = add_exec(dnnl::batch_normalization_forward(pd), pd.scratchpad_desc().get_size());
    e.args = {{DNNL_ARG_SRC, Source::kValue, src, layout},
              {DNNL_ARG_MEAN, Source::kInput, graph_input(l, 3), pd.mean_desc()},
              {DNNL_ARG_VARIANCE, Source::kInput, graph_input(l, 4), pd.variance_desc()},
              {DNNL_ARG_SCALE_SHIFT, Source::kScaleShift, static_cast<int>(batch_norms.size()) - 1,
               pd.weights_desc()},
              {DNNL_ARG_DST, Source::kValue, out, pd.dst_desc()}};
    e.reads = {src};
    e.writes = {out};
    // A dequantized copy may be written over too: plan_workspace checks it is its last read.
    if (src != data_of(l) || plan.dies_at(src, plan.of(l).last)) e.inplace_from = src;
  }

  // A primitive of one input (src, read in its layout) and one output.
  Exec& add_unary(dnnl::primitive primitive, const dnnl::primitive_desc_base& pd, int src,
                  int out) {
    const md layout = values[static_cast<size_t>(src)].desc;
    values[static_cast<size_t>(out)].desc = pd.dst_desc();
    Exec& e = add_exec(std::move(primitive), pd.scratchpad_desc().get_size());
    e.args = {{DNNL_ARG_SRC, Source::kValue, src, layout},
              {DNNL_ARG_DST, Source::kValue, out, pd.dst_desc()}};
    e.reads = {src};
    e.writes = {out};
    return e;
  }

  void emit_activation(int l) {
    const int src = as_computed(data_of(l));
    dnnl::eltwise_forward::primitive_desc pd(
        {prop::forward_inference, eltwise_algorithm(layer(l).layer.activation),
         values[static_cast<size_t>(src)].desc, 0.0f, 0.0f},
        scratch_attr(), cpu_engine());
    Exec& e = add_unary(dnnl::eltwise_forward(pd), pd, src, value_of(l));
    if (src != data_of(l) || plan.dies_at(src, l)) e.inplace_from = src;
  }

  void emit_pooling(int l) {
    const PoolSpec& s = layer(l).layer.pool;
    const int src = data_of(l);
    const PoolDescs d(s);
    const md& from = values[static_cast<size_t>(src)].desc;
    dnnl::pooling_forward::primitive_desc pd(
        d.forward_desc(prop::forward_inference, from, md(d.dst.dims(), from.data_type(), tag::any)),
        scratch_attr(), cpu_engine());
    add_unary(dnnl::pooling_forward(pd), pd, src, value_of(l));
    // Pooling keeps an int8 input's type and scale.
    values[static_cast<size_t>(value_of(l))].scale = values[static_cast<size_t>(src)].scale;
  }

  void emit_add(int l) {
    int a = layer(l).inputs[0], b = layer(l).inputs[1];
    // Keep the layout of an intermediate (blocked) operand rather than a graph input's.
    if (values[static_cast<size_t>(a)].input >= 0 && values[static_cast<size_t>(b)].input < 0)
      std::swap(a, b);
    const int a_value = a;
    a = as_computed(a);
    b = as_computed(b);
    const md layout = values[static_cast<size_t>(a)].desc;
    const int b_as_a = as_layout(b, layout);
    const int out = value_of(l);
    dnnl::binary::primitive_desc pd({dnnl::algorithm::binary_add, layout, layout, layout},
                                    scratch_attr(), cpu_engine());
    values[static_cast<size_t>(out)].desc = pd.dst_desc();
    Exec& e = add_exec(dnnl::binary(pd), pd.scratchpad_desc().get_size());
    e.args = {{DNNL_ARG_SRC_0, Source::kValue, a, layout},
              {DNNL_ARG_SRC_1, Source::kValue, b_as_a, layout},
              {DNNL_ARG_DST, Source::kValue, out, pd.dst_desc()}};
    e.reads = {a, b_as_a};
    e.writes = {out};
    // A dequantized copy may be written over too: plan_workspace checks it is its last read.
    if (a != a_value || plan.dies_at(a, l)) e.inplace_from = a;
  }

  // Slots of the workspace by liveness: a value's slot returns to the free
  // list after its last reader; an in-place primitive hands its input's
  // slot to its output.
  void plan_workspace() {
    for (size_t k = 0; k < execs.size(); ++k)
      for (int v : execs[k].reads) values[static_cast<size_t>(v)].last_use = static_cast<int>(k);
    WorkspaceSlots slots;
    size_t scratch = 0;
    for (size_t k = 0; k < execs.size(); ++k) {
      Exec& e = execs[k];
      scratch = std::max(scratch, e.scratchpad);
      int handed = -1;
      for (size_t w = 0; w < e.writes.size(); ++w) {
        Value& out = values[static_cast<size_t>(e.writes[w])];
        if (out.slot >= 0 || out.input >= 0) continue;
        const size_t bytes = out.desc.get_size();
        if (w == 0 && e.inplace_from >= 0) {
          Value& in = values[static_cast<size_t>(e.inplace_from)];
          if (in.last_use == static_cast<int>(k) && in.slot >= 0 && slots.bytes(in.slot) >= bytes) {
            out.slot = in.slot;
            handed = e.inplace_from;
            continue;
          }
          // The plan only asks a convolution to write over a dying addend.
          MX_CHECK(e.primitive.get_kind() != dnnl::primitive::kind::convolution,
                   "fused inference graph: a residual addend could not be written over");
          e.inplace_from = -1;
        }
        out.slot = slots.take(bytes);
      }
      for (int v : e.reads) {
        Value& in = values[static_cast<size_t>(v)];
        if (v == handed || in.slot < 0 || in.last_use != static_cast<int>(k)) continue;
        slots.give_back(in.slot);
        in.last_use = -2;  // freed once even when read twice by this primitive
      }
    }
    slot_offsets = slots.offsets(kAlign);
    scratch_offset = slots.total(kAlign);
    stats.workspace_bytes = scratch_offset + aligned(scratch);
    stats.primitives = static_cast<int>(execs.size());
  }

  // Weights (and bias) of every convolution as its primitive takes them.
  void prepare_weights(const std::vector<TensorRef>& inputs, dnnl::stream& stream) {
    for (ConvState& c : convs) {
      if (!c.fold && !c.int8)
        c.bias_at = c.bias >= 0 ? inputs[static_cast<size_t>(c.bias)].data : nullptr;
      if (!c.fold && !c.reorder && !c.int8) {  // taken as the caller has them
        c.weights_at = inputs[static_cast<size_t>(c.weight)].data;
        continue;
      }
      std::vector<std::optional<ContentStamp>> stamps;
      bool all_stamped = true;
      for (int i : {c.weight, c.bias, c.gamma, c.beta, c.mean, c.var}) {
        if (i < 0) continue;
        stamps.push_back(content_stamp(inputs[static_cast<size_t>(i)]));
        all_stamped = all_stamped && stamps.back().has_value();
      }
      // Unchanged when every source has a stamp and each equals the last one.
      const bool unchanged = c.ready && all_stamped && stamps == c.stamps;
      if (unchanged) continue;
      ++stats.weight_preparations;

      const auto* weights = static_cast<const float*>(inputs[static_cast<size_t>(c.weight)].data);
      const void* plain_weights = weights;
      if (c.fold) {
        fold_batch_norm(c, inputs, weights);
        plain_weights = c.folded.data();
      }
      if (c.int8) {
        quantize_weights(c, static_cast<const float*>(plain_weights),
                         c.fold ? c.folded_bias.data()
                         : c.bias >= 0
                             ? static_cast<const float*>(inputs[static_cast<size_t>(c.bias)].data)
                             : nullptr,
                         stream);
        std::vector<float>().swap(c.folded);
      } else if (c.reorder) {
        void* target = c.reordered.reserve(c.weights.get_size());
        dnnl::memory from(c.plain_weights, cpu_engine(), const_cast<void*>(plain_weights));
        dnnl::memory to(c.weights, cpu_engine(), target);
        c.reorder->execute(stream, from, to);
        c.weights_at = target;
        // The folded copy was only the reorder's source: give its memory back
        // (ResNet-50: about as much as the weights themselves).
        std::vector<float>().swap(c.folded);
      } else {
        c.weights_at = plain_weights;
      }
      // Without a stamp the caller's arrays may change unseen: prepare again next time.
      c.ready = all_stamped;
      c.stamps = std::move(stamps);
    }
  }

  // int8 weights: each output channel's float32 weights scaled so that
  // their largest magnitude is 127 (MXNet's channel-wise quantization),
  // rounded by oneDNN's reorder into the primitive's layout. The primitive
  // adds the bias to its int32 sums and then applies the output scale, so
  // the bias is given in the sums' units.
  void quantize_weights(ConvState& c, const float* weights, const float* bias,
                        dnnl::stream& stream) {
    const size_t filters = static_cast<size_t>(c.filters);
    const size_t per_filter = c.plain_weights.get_size() / sizeof(float) / filters;
    c.weight_scales.resize(filters);
    c.output_scales.resize(filters);
    c.scaled_bias.assign(filters, 0.0f);
    for (size_t o = 0; o < filters; ++o) {
      float magnitude = 0;
      for (size_t k = 0; k < per_filter; ++k)
        magnitude = std::max(magnitude, std::fabs(weights[o * per_filter + k]));
      const float scale = magnitude > 0 ? 127.0f / magnitude : 1.0f;
      c.weight_scales[o] = scale;
      c.output_scales[o] = c.out_scale / (c.in_scale * scale);
      if (bias != nullptr) c.scaled_bias[o] = bias[o] * c.in_scale * scale;
    }
    // Scales per output channel: dimension 0 of (O, I, ...) weights, 0 and 1
    // of grouped (G, O/G, I/G, ...) ones.
    const int mask = c.plain_weights.dims().size() == 5 ? 3 : 1;
    dnnl::primitive_attr attr;
    attr.set_output_scales(mask, c.weight_scales);
    dnnl::reorder reorder(dnnl::reorder::primitive_desc(cpu_engine(), c.plain_weights, cpu_engine(),
                                                        c.weights, attr));
    void* target = c.reordered.reserve(c.weights.get_size());
    dnnl::memory from(c.plain_weights, cpu_engine(), const_cast<float*>(weights));
    dnnl::memory to(c.weights, cpu_engine(), target);
    reorder.execute(stream, from, to);
    c.weights_at = target;
    c.bias_at = c.scaled_bias.data();
    Exec& e = execs[static_cast<size_t>(c.exec)];
    auto [primitive, scratchpad] = c.with_scales(c.output_scales);
    MX_CHECK(scratchpad <= e.scratchpad,
             "fused inference graph: an int8 layer needs more scratchpad than planned");
    e.primitive = std::move(primitive);
  }

  // BatchNorm(conv(x, w) + b) = conv(x, w * s) + (b - mean) * s + beta with
  // s = gamma / sqrt(var + eps) per filter, as MXNet's BatchNorm computes it.
  static void fold_batch_norm(ConvState& c, const std::vector<TensorRef>& inputs,
                              const float* weights) {
    auto at = [&](int i) { return static_cast<const float*>(inputs[static_cast<size_t>(i)].data); };
    const float *gamma = at(c.gamma), *beta = at(c.beta), *mean = at(c.mean), *var = at(c.var);
    const auto* bias = c.bias >= 0 ? at(c.bias) : nullptr;
    const size_t filters = static_cast<size_t>(c.filters);
    const size_t per_filter = c.plain_weights.get_size() / sizeof(float) / filters;
    c.folded.resize(filters * per_filter);
    c.folded_bias.resize(filters);
    for (size_t o = 0; o < filters; ++o) {
      const double scale = (c.fix_gamma ? 1.0 : static_cast<double>(gamma[o])) /
                           std::sqrt(static_cast<double>(var[o]) + c.eps);
      for (size_t k = 0; k < per_filter; ++k)
        c.folded[o * per_filter + k] = static_cast<float>(weights[o * per_filter + k] * scale);
      const double b = bias != nullptr ? bias[o] : 0.0;
      c.folded_bias[o] = static_cast<float>((b - mean[o]) * scale + beta[o]);
    }
    c.bias_at = c.folded_bias.data();
  }

  void prepare_batch_norms(const std::vector<TensorRef>& inputs) {
    for (BatchNormState& b : batch_norms) {
      const size_t channels = b.scale_shift.size() / 2;
      const auto* gamma = static_cast<const float*>(inputs[static_cast<size_t>(b.gamma)].data);
      const auto* beta = static_cast<const float*>(inputs[static_cast<size_t>(b.beta)].data);
      for (size_t ch = 0; ch < channels; ++ch) {
        b.scale_shift[ch] = b.fix_gamma ? 1.0f : gamma[ch];
        b.scale_shift[channels + ch] = beta[ch];
      }
    }
  }

  void run(const std::vector<TensorRef>& inputs, const std::vector<TensorRef>& outputs,
           const std::vector<OpReq>& req, const OpResources& resources) {
    MX_CHECK(inputs.size() == desc.inputs.size() && outputs.size() == desc.outputs.size(),
             "fused inference graph called with the wrong number of arrays");
    std::lock_guard lock(mutex);
    omp_set_num_threads(dnnl_threads());
    const dnnl::engine& engine = cpu_engine();
    thread_local dnnl::stream stream(engine);
    auto* base = static_cast<std::byte*>(resources.temp != nullptr
                                             ? resources.temp_space(stats.workspace_bytes + kAlign)
                                             : own_workspace.reserve(stats.workspace_bytes));
    if (auto address = reinterpret_cast<uintptr_t>(base); address % kAlign != 0)
      base += aligned(address) - address;
    prepare_weights(inputs, stream);
    prepare_batch_norms(inputs);
    // Outputs added to (kAdd) are made in a buffer of their own first.
    std::vector<std::vector<float>> sums(outputs.size());
    auto output_at = [&](size_t k) -> void* {
      if (req[k] != OpReq::kAdd) return outputs[k].data;
      sums[k].resize(static_cast<size_t>(outputs[k].size()));
      return sums[k].data();
    };
    auto address_of = [&](const Arg& a) -> void* {
      const auto i = static_cast<size_t>(a.index);
      switch (a.source) {
        case Source::kValue: {
          const Value& v = values[i];
          if (v.input >= 0) return inputs[static_cast<size_t>(v.input)].data;
          return base + slot_offsets[static_cast<size_t>(v.slot)];
        }
        case Source::kWeights: return const_cast<void*>(convs[i].weights_at);
        case Source::kBias: return const_cast<void*>(convs[i].bias_at);
        case Source::kScaleShift: return batch_norms[i].scale_shift.data();
        case Source::kInput: return inputs[i].data;
        case Source::kOutput: return output_at(i);
      }
      return nullptr;
    };
    std::unordered_map<int, dnnl::memory> args;
    for (const Exec& e : execs) {
      const bool unwanted = std::any_of(e.args.begin(), e.args.end(), [&](const Arg& a) {
        return a.source == Source::kOutput && req[static_cast<size_t>(a.index)] == OpReq::kNull;
      });
      if (unwanted) continue;
      args.clear();
      for (const Arg& a : e.args) args.emplace(a.arg, dnnl::memory(a.desc, engine, address_of(a)));
      if (e.scratchpad > 0)
        args.emplace(DNNL_ARG_SCRATCHPAD,
                     dnnl::memory(dnnl::memory::desc({static_cast<dnnl::memory::dim>(e.scratchpad)},
                                                     dnnl::memory::data_type::u8, tag::x),
                                  engine, base + scratch_offset));
      e.primitive.execute(stream, args);
    }
    stream.wait();
    for (size_t k = 0; k < outputs.size(); ++k) {
      if (req[k] != OpReq::kAdd) continue;
      auto* target = static_cast<float*>(outputs[k].data);
      for (size_t i = 0; i < sums[k].size(); ++i) target[i] += sums[k][i];
    }
  }
};

DnnlInferenceGraph::DnnlInferenceGraph(const FusedGraphDesc& desc) {
  try {
    impl_ = std::make_unique<Impl>(desc);
  } catch (const dnnl::error& e) {
    throw Error(str("fused inference graph: oneDNN cannot build it: ", e.what()));
  }
}

DnnlInferenceGraph::~DnnlInferenceGraph() = default;

void DnnlInferenceGraph::run(const std::vector<TensorRef>& inputs,
                             const std::vector<TensorRef>& outputs, const std::vector<OpReq>& req,
                             const OpResources& resources) {
  try {
    impl_->run(inputs, outputs, req, resources);
  } catch (const dnnl::error& e) {
    throw Error(str("fused inference graph: oneDNN failed: ", e.what()));
  }
}

const DnnlInferenceGraph::Stats& DnnlInferenceGraph::stats() const { return impl_->stats; }

}  // namespace mx::op::dnnl_impl

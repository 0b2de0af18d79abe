#include "onnx/export_qdq.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "base/strings.h"
#include "graph/quantize_marks.h"
#include "op/inference_layer.h"

namespace mx::onnx {
using graph::Node;
using graph::NodeEntry;
using ::onnx::NodeProto;
using ::onnx::TensorProto;

namespace {

// How mx holds a value of calibrated range `r` in int8 (the fused graph's
// int8_form): unsigned when the range has no negative values, else signed
// and symmetric. Stored = real * scale; ONNX's scale is 1 / scale.
struct Form {
  bool is_unsigned = false;
  float scale = 1;
};

Form form_of(const op::ValueRange& r, bool may_be_unsigned = true) {
  if (may_be_unsigned && r.min >= 0) return {true, r.max > 0 ? 255.0f / r.max : 1.0f};
  const float magnitude = std::max(std::fabs(r.min), std::fabs(r.max));
  return {false, magnitude > 0 ? 127.0f / magnitude : 1.0f};
}

using Key = std::pair<const Node*, uint32_t>;
Key key_of(const NodeEntry& e) { return {e.node.get(), e.index}; }
std::string name_of(const NodeEntry& e) { return e.node->output_name(e.index); }

struct Reader {
  const Node* node;
  size_t input;
};

// The primitive an int8 convolution runs as (op/fusion_plan.h's
// plan_convolution, on the symbol): the convolution, a BatchNorm folded
// into it, then an activation and a residual addition.
struct Chain {
  std::shared_ptr<Node> conv;
  NodeEntry made;  // the value the primitive makes
  std::optional<NodeEntry> addend;
  bool relu_only = true;  // its activations are ReLUs
};

class Int8Export {
 public:
  Int8Export(ExportContext& ctx, const std::vector<std::shared_ptr<Node>>& nodes,
             const std::vector<NodeEntry>& heads)
      : ctx_(ctx), nodes_(nodes) {
    for (const auto& n : nodes) {
      shared_[n.get()] = n;
      for (size_t i = 0; i < n->inputs.size(); ++i)
        readers_[key_of(n->inputs[i])].push_back({n.get(), i});
    }
    for (const auto& h : heads) heads_.insert(key_of(h));
  }

  int run() {
    for (const auto& n : nodes_)
      if (!n->is_variable() && graph::marked_int8(*n) && runs_in_int8(*n)) int8_.insert(n.get());
    if (int8_.empty()) return 0;
    if (ctx_.opset < 13) {
      std::vector<std::string> names;
      for (const auto& n : nodes_)
        if (int8_.count(n.get())) names.push_back("'" + n->name + "'");
      throw InputError(str("cannot export to ONNX: the int8 layers (", join(names, ", "),
                           ") need opset 13 or later (their weights are quantized per output "
                           "channel, DequantizeLinear's axis)"));
    }
    plan_primitives();
    find_int8_values();
    rewrite();
    return static_cast<int>(int8_.size());
  }

 private:
  // The layer node n is in a fused inference graph (graph/fuse_inference.cc's
  // layer_of, with the shapes the export inferred).
  std::optional<op::InferenceLayer> layer_of(const Node& n) const {
    if (n.is_variable() || !n.op->def().inference_layer) return std::nullopt;
    op::ShapeVector in, out;
    auto shape = [&](const std::string& name) -> std::optional<Shape> {
      auto it = ctx_.shapes.find(name);
      if (it == ctx_.shapes.end() || !it->second.is_known()) return std::nullopt;
      return it->second;
    };
    for (const auto& e : n.inputs) {
      auto s = shape(name_of(e));
      if (!s) return std::nullopt;
      in.push_back(*s);
    }
    for (uint32_t k = 0; k < n.num_visible_outputs(); ++k) {
      auto s = shape(n.output_name(k));
      if (!s) return std::nullopt;
      out.push_back(*s);
    }
    auto layer = n.op->def().inference_layer(n.op->params(), in, out);
    if (!layer) return std::nullopt;
    if (layer->kind != op::LayerKind::kAdd &&
        !std::all_of(n.inputs.begin() + 1, n.inputs.end(),
                     [](const NodeEntry& e) { return e.node->is_variable(); }))
      return std::nullopt;
    return layer;
  }

  // A marked convolution runs in int8 where mx fuses it: 2-D, with its
  // weights (and bias) stored arrays; a marked FullyConnected likewise, of
  // 2-D data, when it exports as a Gemm (flatten, the default).
  bool runs_in_int8(const Node& conv) const {
    if (!layer_of(conv)) return false;
    if (conv.op->def().name == "FullyConnected") {
      auto flatten = conv.attrs.find("flatten");
      if (flatten != conv.attrs.end() &&
          (flatten->second == "False" || flatten->second == "0" || flatten->second == "false"))
        return false;
    }
    for (size_t i = 1; i < conv.inputs.size(); ++i) {
      const NDArray* a = ctx_.array(conv.inputs[i].node->name);
      if (a == nullptr || a->dtype() != DType::kFloat32) return false;
    }
    return true;
  }

  // The one node reading `e`, when one input of one node reads it and it is
  // not an output of the graph.
  const Node* sole_reader(const NodeEntry& e) const {
    if (heads_.count(key_of(e))) return nullptr;
    auto it = readers_.find(key_of(e));
    if (it == readers_.end() || it->second.size() != 1) return nullptr;
    return it->second[0].node;
  }

  std::shared_ptr<Node> shared(const Node* n) const { return shared_.at(n); }

  // Every convolution's (and inner product's) primitive, in order (an addition fed by two
  // convolutions goes to the first, as in FusionPlan).
  void plan_primitives() {
    std::set<const Node*> absorbed;
    for (const auto& n : nodes_) {
      auto layer = layer_of(*n);
      if (!layer || (layer->kind != op::LayerKind::kConvolution &&
                     layer->kind != op::LayerKind::kFullyConnected))
        continue;
      const bool inner_product = layer->kind == op::LayerKind::kFullyConnected;
      Chain c{n, NodeEntry{n, 0, 0}, std::nullopt, true};
      bool folded = false, has_sum = false, has_eltwise = false;
      NodeEntry current = c.made;
      for (const Node* next = sole_reader(current); next != nullptr; next = sole_reader(current)) {
        if (absorbed.count(next)) break;
        auto l = layer_of(*next);
        if (!l) break;
        // An inner product takes the activation after it only.
        if (inner_product && l->kind != op::LayerKind::kActivation) break;
        if (l->kind == op::LayerKind::kBatchNorm && next->inputs[0] == current && !folded &&
            !has_sum && !has_eltwise) {
          folded = true;
        } else if (l->kind == op::LayerKind::kActivation && !has_eltwise) {
          has_eltwise = true;
          c.relu_only = c.relu_only && l->activation == op::ActType::kRelu;
        } else if (l->kind == op::LayerKind::kAdd && !has_sum && !has_eltwise &&
                   !(next->inputs[0] == next->inputs[1])) {
          has_sum = true;
          c.addend = next->inputs[0] == current ? next->inputs[1] : next->inputs[0];
          owner_[next] = n.get();
        } else {
          break;
        }
        absorbed.insert(next);
        current = NodeEntry{shared(next), 0, 0};
      }
      c.made = current;
      if (int8_.count(n.get())) made_by_[c.made.node.get()] = chains_.size();
      chains_.push_back(c);
    }
  }

  // Whether an int8 convolution reads `v` (as its data, or through pooling,
  // or as the addend of its addition): the fused graph's read_in_int8.
  bool read_in_int8(const NodeEntry& v) const {
    auto it = readers_.find(key_of(v));
    if (it == readers_.end()) return false;
    for (const Reader& r : it->second) {
      auto layer = layer_of(*r.node);
      if (!layer) continue;
      switch (layer->kind) {
        case op::LayerKind::kConvolution:
        case op::LayerKind::kFullyConnected:
          if (int8_.count(r.node) && r.input == 0) return true;
          break;
        case op::LayerKind::kPooling:
          if (read_in_int8(NodeEntry{shared(r.node), 0, 0})) return true;
          break;
        case op::LayerKind::kAdd: {
          auto o = owner_.find(r.node);
          if (o != owner_.end() && int8_.count(o->second)) return true;
          break;
        }
        default: break;
      }
    }
    return false;
  }

  static std::optional<op::ValueRange> range_of(const NodeEntry& e) {
    if (e.index != 0) return std::nullopt;
    return graph::calibrated_range(*e.node);
  }

  // The values mx holds in int8 between layers: what an int8 primitive
  // makes, when it has a range, is not an output, its activations are
  // ReLUs and an int8 layer reads it; and pooling of such a value (at its
  // scale).
  void find_int8_values() {
    for (const auto& n : nodes_) {
      auto layer = layer_of(*n);
      if (layer && layer->kind == op::LayerKind::kPooling) {
        auto in = int8_values_.find(key_of(n->inputs[0]));
        if (in != int8_values_.end()) int8_values_[{n.get(), 0}] = in->second;
      }
      auto m = made_by_.find(n.get());
      if (m == made_by_.end()) continue;
      const Chain& c = chains_[m->second];
      const auto range = range_of(c.made);
      if (!range || heads_.count(key_of(c.made)) || !c.relu_only || !read_in_int8(c.made)) continue;
      // As the fused graph types it (dnnl_inference_graph.cc, layer_types):
      // an s8 addend is read as s8 into a u8 output; only an addend held in
      // float32 with negative values makes the output signed.
      bool signed_addend = false;
      if (c.addend) {
        const auto addend = range_of(*c.addend);
        const bool held = int8_values_.count(key_of(*c.addend)) > 0;
        signed_addend = !held && (!addend || addend->min < 0);
      }
      int8_values_[key_of(c.made)] = form_of(*range, !signed_addend);
    }
  }

  // --- The ONNX side ---------------------------------------------------------

  std::string tensor(const std::string& name, TensorProto::DataType type,
                     const std::vector<int64_t>& dims, const void* data, size_t bytes) {
    auto* t = ctx_.graph->add_initializer();
    t->set_name(ctx_.unique(name));
    t->set_data_type(type);
    for (int64_t d : dims) t->add_dims(d);
    t->set_raw_data(std::string(static_cast<const char*>(data), bytes));
    return t->name();
  }

  NodeProto node(const std::string& op, const std::string& name,
                 const std::vector<std::string>& inputs, const std::vector<std::string>& outputs) {
    NodeProto n;
    n.set_op_type(op);
    n.set_name(ctx_.unique(name));
    for (const auto& i : inputs) n.add_input(i);
    for (const auto& o : outputs) n.add_output(o);
    return n;
  }

  // QuantizeLinear then DequantizeLinear of `input` in `form`, into `out`;
  // returns the dequantized tensor's name (`output`, or a new one).
  std::string quantize_dequantize(const std::string& input, const std::string& base, Form form,
                                  std::vector<NodeProto>& out, const std::string& output = "") {
    const float scale = 1.0f / form.scale;
    const uint8_t zero = 0;
    const std::string s = tensor(base + "_scale", TensorProto::FLOAT, {}, &scale, sizeof scale);
    const std::string z =
        tensor(base + "_zero_point", form.is_unsigned ? TensorProto::UINT8 : TensorProto::INT8, {},
               &zero, 1);
    const std::string q = ctx_.unique(base + "_quantized");
    const std::string dq = output.empty() ? ctx_.unique(base + "_dequantized") : output;
    out.push_back(node("QuantizeLinear", base + "_quantize", {input, s, z}, {q}));
    out.push_back(node("DequantizeLinear", base + "_dequantize", {q, s, z}, {dq}));
    return dq;
  }

  // A parameter's dequantized tensor takes the parameter's name when only
  // this convolution reads it (so an import gets the name back).
  std::string dequantized_name(const Node& param) {
    auto it = readers_.find({&param, 0});
    const bool alone = it != readers_.end() && it->second.size() == 1;
    return alone ? param.name : ctx_.unique(param.name + "_dequantized");
  }

  // The weights as int8 per output channel (largest magnitude to 127,
  // rounded to nearest even as oneDNN's reorder does) with a per-channel
  // DequantizeLinear; the bias as int32 at scale input scale * weight scale.
  void quantize_parameters(const Node& conv, NodeProto& onnx_conv, float input_scale,
                           std::vector<NodeProto>& out) {
    const Node& weight = *conv.inputs[1].node;
    const NDArray& w = *ctx_.array(weight.name);
    const std::vector<float> values = w.to_vector<float>();
    const int64_t filters = w.shape()[0];
    const size_t per_filter = values.size() / static_cast<size_t>(filters);
    std::vector<int8_t> q(values.size());
    std::vector<float> scales(static_cast<size_t>(filters));
    for (size_t o = 0; o < scales.size(); ++o) {
      float magnitude = 0;
      for (size_t k = 0; k < per_filter; ++k) {
        if (!std::isfinite(values[o * per_filter + k]))
          throw InputError("cannot export to ONNX: the weights of int8 layer '" + conv.name +
                           "' are not all finite");
        magnitude = std::max(magnitude, std::fabs(values[o * per_filter + k]));
      }
      const float s = magnitude > 0 ? 127.0f / magnitude : 1.0f;
      scales[o] = 1.0f / s;
      for (size_t k = 0; k < per_filter; ++k) {
        const float r = std::nearbyint(values[o * per_filter + k] * s);
        q[o * per_filter + k] = static_cast<int8_t>(std::clamp(r, -128.0f, 127.0f));
      }
    }
    const std::vector<int8_t> zeros(scales.size(), 0);
    const std::string wq = tensor(weight.name + "_quantized", TensorProto::INT8,
                                  w.shape().to_vector(), q.data(), q.size());
    const std::string ws = tensor(weight.name + "_scale", TensorProto::FLOAT, {filters},
                                  scales.data(), scales.size() * sizeof(float));
    const std::string wz = tensor(weight.name + "_zero_point", TensorProto::INT8, {filters},
                                  zeros.data(), zeros.size());
    const std::string w_name = dequantized_name(weight);
    NodeProto dq = node("DequantizeLinear", weight.name + "_dequantize", {wq, ws, wz}, {w_name});
    set_int(&dq, "axis", 0);
    out.push_back(dq);
    onnx_conv.set_input(1, w_name);
    if (conv.inputs.size() < 3) return;

    const Node& bias = *conv.inputs[2].node;
    const std::vector<float> b = ctx_.array(bias.name)->to_vector<float>();
    if (b.size() != scales.size()) return;
    std::vector<int32_t> bq(b.size());
    std::vector<float> bias_scales(b.size());
    for (size_t o = 0; o < b.size(); ++o) {
      bias_scales[o] = input_scale * scales[o];
      const double r = std::nearbyint(static_cast<double>(b[o]) / bias_scales[o]);
      // Beyond int32 the bias stays float32 (ONNX Runtime then leaves the
      // convolution unfused; the value is the same).
      if (!(std::fabs(r) <= std::numeric_limits<int32_t>::max())) return;
      bq[o] = static_cast<int32_t>(r);
    }
    const std::vector<int32_t> bias_zeros(b.size(), 0);
    const auto n = static_cast<int64_t>(b.size());
    const std::string bqn = tensor(bias.name + "_quantized", TensorProto::INT32, {n}, bq.data(),
                                   bq.size() * sizeof(int32_t));
    const std::string bs = tensor(bias.name + "_scale", TensorProto::FLOAT, {n}, bias_scales.data(),
                                  bias_scales.size() * sizeof(float));
    const std::string bz = tensor(bias.name + "_zero_point", TensorProto::INT32, {n},
                                  bias_zeros.data(), bias_zeros.size() * sizeof(int32_t));
    const std::string b_name = dequantized_name(bias);
    NodeProto bdq = node("DequantizeLinear", bias.name + "_dequantize", {bqn, bs, bz}, {b_name});
    set_int(&bdq, "axis", 0);
    out.push_back(bdq);
    onnx_conv.set_input(2, b_name);
  }

  void rewrite() {
    auto& graph_nodes = *ctx_.graph->mutable_node();
    std::map<std::string, int> producer;  // ONNX tensor -> index of the node writing it
    for (int i = 0; i < graph_nodes.size(); ++i)
      for (const auto& o : graph_nodes.Get(i).output()) producer[o] = i;
    std::vector<NodeProto> at_start;
    std::map<int, std::vector<NodeProto>> after;  // nodes to add after node i

    // Values held in int8: the node that makes one writes it under another
    // name, and QuantizeLinear + DequantizeLinear give it back.
    for (const auto& n : nodes_) {
      auto held = int8_values_.find({n.get(), 0});
      if (held == int8_values_.end()) continue;
      const Form form = held->second;
      const std::string t = n->output_name(0);
      auto p = producer.find(t);
      if (p == producer.end()) throw Error("export: no ONNX node writes '" + t + "'");
      NodeProto& maker = *graph_nodes.Mutable(p->second);
      const std::string real = ctx_.unique(t + "_prequant");
      for (int o = 0; o < maker.output_size(); ++o)
        if (maker.output(o) == t) maker.set_output(o, real);
      quantize_dequantize(real, t, form, after[p->second], t);
    }

    // Each int8 convolution (Gemm): its data quantized (unless it is held in int8
    // already), its weights and bias.
    std::map<std::string, std::string> quantized_inputs;  // tensor -> its dequantized copy
    for (const auto& n : nodes_) {
      if (!int8_.count(n.get())) continue;
      const std::string out = n->output_name(0);
      const char* onnx_op = n->op->def().name == "FullyConnected" ? "Gemm" : "Conv";
      auto c = producer.find(out);
      if (c == producer.end() || graph_nodes.Get(c->second).op_type() != onnx_op)
        throw Error(str("export: no ONNX ", onnx_op, " writes '", out, "'"));
      NodeProto& conv = *graph_nodes.Mutable(c->second);
      const NodeEntry& data = n->inputs[0];
      Form form;
      if (auto held = int8_values_.find(key_of(data)); held != int8_values_.end()) {
        form = held->second;
      } else {
        const auto range = range_of(data);
        if (!range)
          throw InputError("cannot export to ONNX: layer '" + n->name +
                           "' is marked int8 but its input '" + name_of(data) +
                           "' has no calibrated range");
        form = form_of(*range);
        const std::string x = name_of(data);
        auto done = quantized_inputs.find(x);
        if (done == quantized_inputs.end()) {
          auto p = producer.find(x);
          auto& into = p == producer.end() ? at_start : after[p->second];
          done = quantized_inputs.emplace(x, quantize_dequantize(x, x, form, into)).first;
        }
        conv.set_input(0, done->second);
      }
      quantize_parameters(*n, conv, 1.0f / form.scale, at_start);
    }

    google::protobuf::RepeatedPtrField<NodeProto> old;
    old.Swap(&graph_nodes);
    for (auto& n : at_start) *graph_nodes.Add() = std::move(n);
    for (int i = 0; i < old.size(); ++i) {
      *graph_nodes.Add() = std::move(*old.Mutable(i));
      if (auto a = after.find(i); a != after.end())
        for (auto& n : a->second) *graph_nodes.Add() = std::move(n);
    }
  }

  ExportContext& ctx_;
  const std::vector<std::shared_ptr<Node>>& nodes_;
  std::map<const Node*, std::shared_ptr<Node>> shared_;
  std::map<Key, std::vector<Reader>> readers_;
  std::set<Key> heads_;
  std::set<const Node*> int8_;                // the layers exported in int8
  std::vector<Chain> chains_;                 // every convolution's primitive
  std::map<const Node*, size_t> made_by_;     // made value's node -> int8 chain
  std::map<const Node*, const Node*> owner_;  // addition -> the convolution that takes it
  std::map<Key, Form> int8_values_;           // values held in int8, and how
};

}  // namespace

int export_int8_layers(ExportContext& ctx, const std::vector<std::shared_ptr<Node>>& nodes,
                       const std::vector<NodeEntry>& heads) {
  return Int8Export(ctx, nodes, heads).run();
}

}  // namespace mx::onnx

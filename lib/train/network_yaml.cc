#include "train/network_yaml.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>

#include "base/error.h"
#include "base/param_value.h"
#include "base/param_yaml.h"
#include "base/strings.h"
#include "op/registry.h"
#include "train/attention_layer.h"
#include "train/recurrent_layer.h"

namespace mx::train {
namespace {

// Limits that keep a config from hanging the builder or exhausting memory:
// each is far beyond what a real network needs (ResNet-152 has ~500 layers).
constexpr int kMaxExpressionNesting = 64;  // parentheses and unary minus in ${...}
constexpr int kMaxRepeat = 10000;          // one layer's `repeat`
constexpr int kMaxLayers = 100000;         // layers in the whole network
constexpr int kMaxBlockNesting = 32;       // blocks inside blocks

// ---- ${...} expressions ---------------------------------------------------

class Expression {
 public:
  Expression(const std::string& text, const std::map<std::string, std::string>& vars,
             const std::string& where)
      : text_(text), vars_(vars), where_(where) {}

  double evaluate() {
    double v = comparison();
    skip_space();
    if (pos_ != text_.size()) fail("unexpected '" + text_.substr(pos_) + "'");
    if (!std::isfinite(v)) fail("the result is not a finite number");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    // A long expression is shortened: the message names the place anyway.
    const std::string shown = text_.size() > 80 ? text_.substr(0, 60) + "..." : text_;
    throw InputError(where_ + ": in expression '" + shown + "': " + why);
  }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool accept(const std::string& token) {
    skip_space();
    if (text_.compare(pos_, token.size(), token) == 0) {
      pos_ += token.size();
      return true;
    }
    return false;
  }
  double comparison() {
    double left = sum();
    for (const char* op : {"==", "!=", "<=", ">=", "<", ">"}) {
      if (accept(op)) {
        double right = sum();
        std::string o = op;
        if (o == "==") return left == right;
        if (o == "!=") return left != right;
        if (o == "<=") return left <= right;
        if (o == ">=") return left >= right;
        if (o == "<") return left < right;
        return left > right;
      }
    }
    return left;
  }
  double sum() {
    double v = product();
    for (;;) {
      if (accept("+"))
        v += product();
      else if (accept("-"))
        v -= product();
      else
        return v;
    }
  }
  double product() {
    double v = unary();
    for (;;) {
      if (accept("//")) {
        double d = unary();
        if (d == 0) fail("division by zero");
        v = std::floor(v / d);
      } else if (accept("*")) {
        v *= unary();
      } else if (accept("/")) {
        double d = unary();
        if (d == 0) fail("division by zero");
        v /= d;
      } else if (accept("%")) {
        double d = unary();
        if (d == 0) fail("division by zero");
        v = std::fmod(v, d);
      } else {
        return v;
      }
    }
  }
  // Counts the nesting of `unary` so that "((((..." cannot exhaust the stack.
  struct Nesting {
    explicit Nesting(Expression& e) : e_(e) {
      if (++e_.depth_ > kMaxExpressionNesting)
        e_.fail(str("nested deeper than ", kMaxExpressionNesting, " levels"));
    }
    ~Nesting() { --e_.depth_; }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;
    Expression& e_;
  };
  double unary() {
    const Nesting nesting(*this);
    if (accept("-")) return -unary();
    if (accept("(")) {
      double v = comparison();
      if (!accept(")")) fail("missing ')'");
      return v;
    }
    skip_space();
    size_t start = pos_;
    if (pos_ < text_.size() &&
        (std::isalpha(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      while (pos_ < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
        ++pos_;
      std::string name = text_.substr(start, pos_ - start);
      if (name == "true" || name == "True") return 1;
      if (name == "false" || name == "False") return 0;
      auto it = vars_.find(name);
      if (it == vars_.end()) {
        std::vector<std::string> names;
        for (const auto& [k, v] : vars_) names.push_back(k);
        fail("unknown name '" + name + "'" + did_you_mean(name, names));
      }
      return number(it->second, name);
    }
    while (pos_ < text_.size() && (std::isdigit(static_cast<unsigned char>(text_[pos_])) ||
                                   text_[pos_] == '.' || text_[pos_] == 'e' || text_[pos_] == 'E'))
      ++pos_;
    if (start == pos_) fail("expected a number or a name");
    return number(text_.substr(start, pos_ - start), "");
  }
  double number(const std::string& s, const std::string& name) const {
    std::string t = to_lower(trim(s));
    if (t == "true") return 1;
    if (t == "false") return 0;
    try {
      return param_value::parse_double(t);
    } catch (const InputError&) {
      fail(name.empty() ? "'" + s + "' is not a number"
                        : "'" + name + "' = '" + s + "' is not a number");
    }
  }

  const std::string& text_;
  const std::map<std::string, std::string>& vars_;
  const std::string& where_;
  size_t pos_ = 0;
  int depth_ = 0;
};

std::string format_number(double v) {
  if (std::floor(v) == v && std::abs(v) < 1e15) return std::to_string(static_cast<long long>(v));
  return param_value::print_double(v);
}

bool truthy(const std::string& value) {
  std::string t = to_lower(trim(value));
  return !(t.empty() || t == "0" || t == "false" || t == "none" || t == "0.0");
}

// ---- the builder ----------------------------------------------------------

struct Block {
  std::map<std::string, std::string> defaults;
  YAML::Node layers;
  YAML::Node node;
};

class NetworkBuilder {
 public:
  NetworkBuilder(std::string file, LayerOrigins* origins)
      : file_(std::move(file)), origins_(origins) {}

  graph::Symbol build(const YAML::Node& network) {
    if (!network.IsMap()) fail(network, "the network must be a mapping with 'layers'");
    check_keys(network, {"inputs", "blocks", "layers", "outputs"}, "network");
    Scope scope;
    std::vector<std::string> inputs = {"data"};
    if (network["inputs"]) inputs = string_list(network["inputs"], {});
    for (const auto& name : inputs) scope.names[name] = graph::Symbol::variable(name);
    scope.previous = scope.names[inputs.front()];
    if (const auto blocks = network["blocks"]) {
      if (!blocks.IsMap()) fail(blocks, "'blocks' must map block names to {params, layers}");
      for (const auto& entry : blocks) {
        const YAML::Node& def = entry.second;
        if (!def.IsMap())
          fail(def, "block '" + entry.first.Scalar() + "' must be a mapping with 'layers'");
        check_keys(def, {"params", "layers"}, "block '" + entry.first.Scalar() + "'");
        Block b;
        b.node = def;
        if (def["params"]) b.defaults = yaml_to_attr_strings(def["params"], file_);
        // Checked before the assignment: yaml-cpp throws assigning a missing node.
        const YAML::Node layers = def["layers"];
        if (!layers || !layers.IsSequence())
          fail(def, "block '" + entry.first.Scalar() + "' needs a list of 'layers'");
        b.layers = layers;
        blocks_[entry.first.Scalar()] = b;
      }
    }
    const YAML::Node layers = network["layers"];
    if (!layers || !layers.IsSequence() || layers.size() == 0)
      fail(network, "the network needs a non-empty list of 'layers'");
    run_layers(layers, scope, {}, "");
    std::vector<graph::Symbol> heads{scope.previous};
    if (const auto outputs = network["outputs"]) {
      heads.clear();
      for (const auto& o : outputs) heads.push_back(resolve(o, scope, {}));
    }
    // Carried recurrent states are outputs too, after the network's own.
    heads.insert(heads.end(), carried_.begin(), carried_.end());
    return heads.size() == 1 ? heads[0] : graph::Symbol::group(heads);
  }

 private:
  struct Scope {
    std::map<std::string, graph::Symbol> names;
    graph::Symbol previous;
  };

  [[noreturn]] void fail(const YAML::Node& node, const std::string& why) const {
    throw InputError(yaml_location(node, file_) + ": " + why);
  }

  void check_keys(const YAML::Node& map, const std::vector<std::string>& allowed,
                  const std::string& what) const {
    for (const auto& entry : map) {
      const std::string key = entry.first.Scalar();
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
        fail(entry.first, "unknown key '" + key + "' in " + what + did_you_mean(key, allowed) +
                              "; allowed: " + join(allowed, ", "));
    }
  }

  std::string text(const YAML::Node& node, const std::map<std::string, std::string>& vars) const {
    return substitute(yaml_to_attr_string(node, file_), vars, yaml_location(node, file_));
  }

  std::vector<std::string> string_list(const YAML::Node& node,
                                       const std::map<std::string, std::string>& vars) const {
    std::vector<std::string> out;
    if (node.IsScalar()) return {substitute(node.Scalar(), vars, yaml_location(node, file_))};
    if (!node.IsSequence()) fail(node, "expected a name or a list of names");
    for (const auto& item : node) {
      if (!item.IsScalar()) fail(item, "expected a name");
      out.push_back(substitute(item.Scalar(), vars, yaml_location(item, file_)));
    }
    return out;
  }

  // "conv1", or "split[1]" for the second output of a multi-output layer.
  graph::Symbol resolve(const YAML::Node& ref_node, const Scope& scope,
                        const std::map<std::string, std::string>& vars) const {
    std::string ref = substitute(ref_node.Scalar(), vars, yaml_location(ref_node, file_));
    std::optional<size_t> index;
    if (auto open = ref.find('['); open != std::string::npos && ref.back() == ']') {
      const std::string digits = ref.substr(open + 1, ref.size() - open - 2);
      size_t i = 0;
      const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), i);
      if (error != std::errc() || end != digits.data() + digits.size() || digits.empty())
        fail(ref_node, "'" + ref + "': the output index in [...] must be a whole number");
      index = i;
      ref = ref.substr(0, open);
    }
    auto it = scope.names.find(ref);
    if (it == scope.names.end()) {
      std::vector<std::string> names;
      for (const auto& [k, v] : scope.names) names.push_back(k);
      fail(ref_node,
           "no layer or input named '" + ref + "' before this point" + did_you_mean(ref, names));
    }
    if (!index) return it->second;
    if (*index >= it->second.num_outputs())
      fail(ref_node, str("'", ref, "' has ", it->second.num_outputs(), " outputs; [", *index,
                         "] is out of range"));
    return it->second[*index];
  }

  std::vector<graph::Symbol> layer_inputs(const YAML::Node& layer, const Scope& scope,
                                          const std::map<std::string, std::string>& vars) const {
    if (!layer["inputs"]) return {scope.previous};
    const YAML::Node inputs = layer["inputs"];
    std::vector<graph::Symbol> out;
    if (inputs.IsScalar()) return {resolve(inputs, scope, vars)};
    // `inputs:` with nothing after it, [] or a mapping names no layer.
    if (!inputs.IsSequence() || inputs.size() == 0)
      fail(inputs, "'inputs' must name a layer or list layers, e.g. inputs: [conv1, pool1]");
    for (const auto& item : inputs) out.push_back(resolve(item, scope, vars));
    return out;
  }

  void run_layers(const YAML::Node& layers, Scope& scope,
                  const std::map<std::string, std::string>& vars, const std::string& prefix) {
    for (const auto& layer : layers) {
      if (!layer.IsMap()) fail(layer, "a layer must be a mapping with 'op' (or 'block')");
      if (layer["when"] && !truthy(text(layer["when"], vars))) continue;
      if (layer["op"] && layer["block"])
        fail(layer, "a layer has either 'op' or 'block', not both");
      if (layer["block"])
        run_block(layer, scope, vars, prefix);
      else if (layer["op"])
        run_op(layer, scope, vars, prefix);
      else
        fail(layer, "a layer needs 'op' (an operator) or 'block' (a block defined under 'blocks')");
    }
  }

  void run_op(const YAML::Node& layer, Scope& scope, const std::map<std::string, std::string>& vars,
              const std::string& prefix) {
    const std::string op_name = text(layer["op"], vars);
    // SelfAttention is a layer kind of the network language, made of operators.
    const bool attention = op_name == kSelfAttentionLayer;
    const op::OpDef* def = attention ? nullptr : op::OpRegistry::get().lookup(op_name);
    if (def == nullptr && !attention) {
      std::vector<std::string> names = {kSelfAttentionLayer};
      for (const auto* d : op::OpRegistry::get().list()) names.push_back(d->name);
      fail(layer["op"], "unknown operator '" + op_name + "'" + did_you_mean(op_name, names) +
                            " (mx-ops lists them all)");
    }
    const int repeat = repeat_count(layer, vars);
    for (int i = 0; i < repeat; ++i) {
      count_layer(layer);
      std::string local =
          layer["name"] ? text(layer["name"], vars) : auto_name(attention ? op_name : def->name);
      if (repeat > 1 && layer["name"]) local += std::to_string(i + 1);
      std::map<std::string, std::string> attrs;
      for (const auto& entry : layer) {
        const std::string key = entry.first.Scalar();
        if (key == "op" || key == "name" || key == "inputs" || key == "when" || key == "repeat")
          continue;
        // Per-parameter training attributes become MXNet's hidden attributes.
        if (key == "lr_mult" || key == "wd_mult" || key == "mirror") {
          attrs["__" + key + "__"] = text(entry.second, vars);
          continue;
        }
        attrs[key] = text(entry.second, vars);
      }
      std::vector<graph::Symbol> inputs = layer_inputs(layer, scope, vars);
      if (attention) {
        add_attention_layer(layer, prefix + local, local, attrs, inputs, scope);
        continue;
      }
      count_variadic_inputs(*def, layer, inputs.size(), attrs);
      try {
        if (def->name == "RNN" && inputs.size() == 1) {
          add_recurrent_layer(prefix + local, local, attrs, inputs[0], scope);
          record_origin(scope.names[local], layer, prefix + local);
          record_origin(scope.names[local + "_states"], layer, prefix + local);
          for (const auto& head : carried_) record_origin(head, layer, prefix + local);
          continue;
        }
        graph::Symbol s = graph::Symbol::create(def->name, prefix + local, attrs, inputs);
        record_origin(s, layer, prefix + local);
        scope.names[local] = s;
        scope.previous = s;
      } catch (const InputError& e) {
        fail(layer, e.what());
      }
    }
  }

  // An RNN layer fed by one input: its states are made here (zeros or
  // carried inputs, recurrent_layer.h); `LOCAL_states` names the RNN node
  // itself, whose outputs 1 and 2 are the final states.
  void add_recurrent_layer(const std::string& name, const std::string& local,
                           const std::map<std::string, std::string>& attrs,
                           const graph::Symbol& data, Scope& scope) {
    RecurrentLayer r = build_recurrent_layer(name, attrs, data, "layer '" + local + "'");
    scope.names[local] = r.output;
    scope.names[local + "_states"] = r.rnn;
    scope.previous = r.output;
    carried_.insert(carried_.end(), r.carried.begin(), r.carried.end());
  }

  // A SelfAttention layer (attention_layer.h): one input, expanded into
  // MXNet's attention operators.
  void add_attention_layer(const YAML::Node& layer, const std::string& name,
                           const std::string& local,
                           const std::map<std::string, std::string>& attrs,
                           const std::vector<graph::Symbol>& inputs, Scope& scope) {
    if (inputs.size() != 1)
      fail(layer["inputs"],
           str("layer '", local, "': SelfAttention takes one input, not ", inputs.size()));
    graph::Symbol out;
    try {
      out = build_self_attention_layer(name, attrs, inputs[0], "layer '" + local + "'");
    } catch (const InputError& e) {
      fail(layer, e.what());
    }
    record_origin(out, layer, name);
    scope.names[local] = out;
    scope.previous = out;
  }

  // Operators with a variable number of inputs (Concat, add_n) take
  // num_args from the inputs listed, as MXNet's Python frontend does; an
  // explicit value that disagrees is a mistake in the config.
  void count_variadic_inputs(const op::OpDef& def, const YAML::Node& layer, size_t num_inputs,
                             std::map<std::string, std::string>& attrs) {
    const bool variadic = std::any_of(def.param_infos.begin(), def.param_infos.end(),
                                      [](const auto& info) { return info.name == "num_args"; });
    if (!variadic) return;
    const std::string counted = std::to_string(num_inputs);
    auto it = attrs.find("num_args");
    if (it == attrs.end()) {
      attrs["num_args"] = counted;
    } else if (trim(it->second) != counted) {
      fail(layer["num_args"], "num_args is " + it->second + " but the layer has " + counted +
                                  " input" + (num_inputs == 1 ? "" : "s") +
                                  "; leave num_args out to count the inputs");
    }
  }

  void run_block(const YAML::Node& layer, Scope& scope,
                 const std::map<std::string, std::string>& vars, const std::string& prefix) {
    const std::string block_name = text(layer["block"], vars);
    auto it = blocks_.find(block_name);
    if (it == blocks_.end()) {
      std::vector<std::string> names;
      for (const auto& [k, v] : blocks_) names.push_back(k);
      fail(layer["block"], "unknown block '" + block_name + "'" + did_you_mean(block_name, names));
    }
    const Block& block = it->second;
    std::vector<std::string> known;
    for (const auto& [k, v] : block.defaults) known.push_back(k);
    std::map<std::string, std::string> args, first;
    for (const auto& entry : layer) {
      const std::string key = entry.first.Scalar();
      if (key == "block" || key == "name" || key == "inputs" || key == "when" || key == "repeat")
        continue;
      if (key == "first") {
        for (const auto& f : entry.second) {
          if (!block.defaults.count(f.first.Scalar()))
            fail(f.first, "block '" + block_name + "' has no parameter '" + f.first.Scalar() + "'" +
                              did_you_mean(f.first.Scalar(), known));
          first[f.first.Scalar()] = text(f.second, vars);
        }
        continue;
      }
      if (!block.defaults.count(key))
        fail(entry.first, "block '" + block_name + "' has no parameter '" + key + "'" +
                              did_you_mean(key, known) + "; its parameters: " + join(known, ", "));
      args[key] = text(entry.second, vars);
    }
    const int repeat = repeat_count(layer, vars);
    if (std::find(active_blocks_.begin(), active_blocks_.end(), block_name) !=
        active_blocks_.end()) {
      active_blocks_.push_back(block_name);
      fail(layer["block"],
           "block '" + block_name + "' uses itself (" + join(active_blocks_, " -> ") + ")");
    }
    if (active_blocks_.size() >= static_cast<size_t>(kMaxBlockNesting))
      fail(layer["block"], str("blocks are nested deeper than ", kMaxBlockNesting, " levels"));
    active_blocks_.push_back(block_name);
    const std::string base = layer["name"] ? text(layer["name"], vars) : auto_name(block_name);
    std::vector<graph::Symbol> inputs = layer_inputs(layer, scope, vars);
    for (int i = 0; i < repeat; ++i) {
      std::map<std::string, std::string> inner_vars = block.defaults;
      for (const auto& [k, v] : args) inner_vars[k] = v;
      if (i == 0)
        for (const auto& [k, v] : first) inner_vars[k] = v;
      inner_vars["index"] = std::to_string(i);
      Scope inner;
      inner.names["input"] = inputs[0];
      for (size_t k = 0; k < inputs.size(); ++k)
        inner.names["input" + std::to_string(k)] = inputs[k];
      inner.previous = inputs[0];
      const std::string instance = base + (repeat > 1 ? std::to_string(i + 1) : "");
      run_layers(block.layers, inner, inner_vars, prefix + instance + "_");
      inputs = {inner.previous};
      scope.names[instance] = inner.previous;
    }
    active_blocks_.pop_back();
    scope.names[base] = inputs[0];
    scope.previous = inputs[0];
  }

  // `repeat: N` (default 1), a whole number from 0 to kMaxRepeat.
  int repeat_count(const YAML::Node& layer, const std::map<std::string, std::string>& vars) const {
    if (!layer["repeat"]) return 1;
    const std::string value = trim(text(layer["repeat"], vars));
    int n = -1;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (error != std::errc() || end != value.data() + value.size() || n < 0 || n > kMaxRepeat)
      fail(layer["repeat"],
           str("repeat must be a whole number from 0 to ", kMaxRepeat, ", not '", value, "'"));
    return n;
  }

  // Counts one more layer; repeats multiply inside repeated blocks.
  void count_layer(const YAML::Node& layer) {
    if (++layers_ > kMaxLayers)
      fail(layer, str("the network has more than ", kMaxLayers,
                      " layers (repeat counts multiply in repeated blocks)"));
  }

  // Records `layer` as the origin of the nodes of `s` that have none yet
  // (the nodes the layer added: earlier layers' nodes are recorded, and the
  // walk stops there).
  void record_origin(const graph::Symbol& s, const YAML::Node& layer, const std::string& name) {
    if (origins_ == nullptr) return;
    const std::string where = yaml_location(layer, file_) + ": layer '" + name + "'";
    std::vector<const graph::Node*> unvisited;
    for (const auto& out : s.outputs()) unvisited.push_back(out.node.get());
    while (!unvisited.empty()) {
      const graph::Node* n = unvisited.back();
      unvisited.pop_back();
      if (!origins_->emplace(n->name, where).second) continue;
      for (const auto& in : n->inputs) unvisited.push_back(in.node.get());
    }
  }

  std::string auto_name(const std::string& op) {
    std::string lower = to_lower(op);
    return lower + std::to_string(counters_[lower]++);
  }

  std::string file_;
  LayerOrigins* origins_;  // null: not recorded
  std::map<std::string, Block> blocks_;
  std::map<std::string, int> counters_;
  std::vector<std::string> active_blocks_;  // the blocks being built, outermost first
  std::vector<graph::Symbol> carried_;      // carried recurrent states' heads
  int layers_ = 0;
};

}  // namespace

std::string substitute(const std::string& text, const std::map<std::string, std::string>& variables,
                       const std::string& where) {
  std::string out;
  size_t pos = 0;
  for (;;) {
    size_t open = text.find("${", pos);
    if (open == std::string::npos) {
      out += text.substr(pos);
      return out;
    }
    size_t close = text.find('}', open);
    if (close == std::string::npos)
      throw InputError(where + ": '${' without '}' in '" + text + "'");
    out += text.substr(pos, open - pos);
    const std::string expr = trim(text.substr(open + 2, close - open - 2));
    auto it = variables.find(expr);
    if (it != variables.end())
      out += it->second;  // a plain name keeps its text ("relu")
    else
      out += format_number(Expression(expr, variables, where).evaluate());
    pos = close + 1;
  }
}

graph::Symbol build_network(const YAML::Node& network, const std::string& file,
                            LayerOrigins* origins) {
  return NetworkBuilder(file, origins).build(network);
}

std::string origin_of_error(const LayerOrigins& origins, const std::string& message) {
  const std::string mark = "node '";
  const size_t begin = message.find(mark);
  if (begin == std::string::npos) return "";
  const size_t end = message.find('\'', begin + mark.size());
  if (end == std::string::npos) return "";
  auto it = origins.find(message.substr(begin + mark.size(), end - begin - mark.size()));
  return it == origins.end() ? "" : it->second;
}

}  // namespace mx::train

// Symbol: a declarative computation graph (MXNet paper, section 2.1).
// Symbols compose (an operator applied to other symbols), group, expose
// every intermediate output (internals), list their free variables, infer
// shapes and types from partial information, and save to / load from
// MXNet 1.x's symbol JSON.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "graph/node.h"

namespace mx::graph {

using ShapeMap = std::map<std::string, Shape>;
using DTypeMap = std::map<std::string, DType>;

struct ShapeInference {
  // In list_arguments / list_outputs / list_auxiliary_states order; a shape
  // that could not be inferred has unknown parts (-1 or unknown rank).
  std::vector<Shape> arguments, outputs, aux;
  bool complete = false;
};

struct TypeInference {
  std::vector<std::optional<DType>> arguments, outputs, aux;
  bool complete = false;
};

class Symbol {
 public:
  Symbol() = default;
  explicit Symbol(std::vector<NodeEntry> outputs) : outputs_(std::move(outputs)) {}

  // A free variable. attrs are extra attributes (e.g. "__shape__": "(1, 3)").
  static Symbol variable(const std::string& name,
                         const std::map<std::string, std::string>& attrs = {});
  // Applies operator `op` (MXNet name) named `name` to `inputs` (by position)
  // and `named_inputs` (by input name). Inputs not given, such as weights,
  // biases and auxiliary states, become new variables "NAME_INPUT"
  // (fc1_weight, bn1_moving_mean), as in MXNet. Each input symbol must
  // have exactly one output.
  static Symbol create(const std::string& op, const std::string& name,
                       const std::map<std::string, std::string>& attrs,
                       const std::vector<Symbol>& inputs = {},
                       const std::map<std::string, Symbol>& named_inputs = {});
  static Symbol group(const std::vector<Symbol>& symbols);

  const std::vector<NodeEntry>& outputs() const { return outputs_; }
  size_t num_outputs() const { return outputs_.size(); }
  Symbol operator[](size_t index) const;
  // An output by name ("fc1_output"), e.g. of get_internals().
  Symbol operator[](const std::string& output_name) const;

  std::vector<std::string> list_arguments() const;
  std::vector<std::string> list_outputs() const;
  std::vector<std::string> list_auxiliary_states() const;
  // Every output of every node (the paper's internals), as one symbol.
  Symbol get_internals() const;

  // Attribute of the single head node, e.g. attr("__shape__").
  std::optional<std::string> attr(const std::string& key) const;
  void set_attr(const std::string& key, const std::string& value);
  // Name of the single head node.
  std::string name() const;

  // Shapes from the given argument shapes plus __shape__ attributes.
  ShapeInference infer_shape(const ShapeMap& known) const;
  TypeInference infer_type(const DTypeMap& known) const;

  // MXNet 1.x's JSON, formatted as MXNet writes it.
  std::string to_json() const;
  // Reads MXNet's JSON (and older files with "param"/"attr"); `source` names
  // the file in errors.
  static Symbol from_json(const std::string& text, const std::string& source = "symbol JSON");
  void save(const std::string& path) const;
  static Symbol load(const std::string& path);

 private:
  std::vector<NodeEntry> outputs_;
};

}  // namespace mx::graph

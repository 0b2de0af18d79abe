// Networks written in YAML (docs/config.md): a list of layers, each fed by
// the previous one unless it names its `inputs`; reusable blocks with
// parameters, `${...}` expressions and `repeat`, so ResNet-50 takes tens
// of lines. Layer ops and parameters are the operator registry's (MXNet's).
#pragma once

#include <yaml-cpp/yaml.h>

#include <map>
#include <string>

#include "graph/symbol.h"

namespace mx::train {

// Where each node of a built network came from: node name -> "FILE:LINE:COL:
// layer 'NAME'" of the YAML layer that made it (a layer of a block names
// its instance, e.g. 'layer2_attention'), so that an error found later, by
// shape inference, can point at the config.
using LayerOrigins = std::map<std::string, std::string>;

// Builds the symbol of `network` (the mapping under a config's `network:`
// key). `file` names the config in errors, which carry file:line:column.
// `origins`, when given, receives where each node came from.
graph::Symbol build_network(const YAML::Node& network, const std::string& file,
                            LayerOrigins* origins = nullptr);

// The origin of the node an error message from shape or type inference
// names ("node 'NAME' (...)"), or "" when it names none of `origins`.
std::string origin_of_error(const LayerOrigins& origins, const std::string& message);

// Evaluates `${...}` in `text` with the given variables: integer and
// floating arithmetic (+ - * / // % and parentheses), comparisons, and
// the words true/false. Throws InputError naming `where` on a bad expression.
std::string substitute(const std::string& text, const std::map<std::string, std::string>& variables,
                       const std::string& where);

}  // namespace mx::train

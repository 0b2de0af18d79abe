// Networks written in YAML (docs/config.md): a list of layers, each fed by
// the previous one unless it names its `inputs`; reusable blocks with
// parameters, `${...}` expressions and `repeat`, so ResNet-50 takes tens
// of lines. Layer ops and parameters are the operator registry's (MXNet's).
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "graph/symbol.h"

namespace mx::train {

// Builds the symbol of `network` (the mapping under a config's `network:`
// key). `file` names the config in errors, which carry file:line:column.
graph::Symbol build_network(const YAML::Node& network, const std::string& file);

// Evaluates `${...}` in `text` with the given variables: integer and
// floating arithmetic (+ - * / // % and parentheses), comparisons, and
// the words true/false. Throws InputError naming `where` on a bad expression.
std::string substitute(const std::string& text, const std::map<std::string, std::string>& variables,
                       const std::string& where);

}  // namespace mx::train

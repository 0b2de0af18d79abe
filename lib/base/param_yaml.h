// Parameter values from YAML: a layer's mapping in a config becomes the
// attribute strings that Params parse, so YAML and MXNet's JSON share one
// parser. Scalars pass through, sequences become tuples "(3, 3)", null
// becomes "None". Errors name the file, line and column.
#pragma once

#include <yaml-cpp/yaml.h>

#include <map>
#include <string>

#include "base/error.h"

namespace mx {

// "FILE:LINE:COLUMN" of a node (1-based), or FILE alone when unknown.
std::string yaml_location(const YAML::Node& node, const std::string& file);

// The attribute string of one YAML value; throws InputError for a mapping or
// a nested sequence.
std::string yaml_to_attr_string(const YAML::Node& node, const std::string& file);

// Every key of a mapping as attribute strings (keys in `skip` are left out,
// e.g. "op", "name", "inputs" of a layer).
std::map<std::string, std::string> yaml_to_attr_strings(const YAML::Node& mapping,
                                                        const std::string& file,
                                                        const std::vector<std::string>& skip = {});

}  // namespace mx

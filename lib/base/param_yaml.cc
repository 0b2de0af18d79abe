#include "base/param_yaml.h"

#include <algorithm>

#include "base/strings.h"

namespace mx {

std::string yaml_location(const YAML::Node& node, const std::string& file) {
  const YAML::Mark mark = node.Mark();
  if (mark.is_null()) return file;
  return str(file, ":", mark.line + 1, ":", mark.column + 1);
}

std::string yaml_to_attr_string(const YAML::Node& node, const std::string& file) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined: return "None";
    case YAML::NodeType::Scalar: return node.Scalar();
    case YAML::NodeType::Sequence: {
      std::vector<std::string> items;
      for (const auto& item : node) {
        if (!item.IsScalar())
          throw InputError(yaml_location(item, file) +
                           ": expected a number or word inside the list, found a nested " +
                           (item.IsMap() ? "mapping" : "list"));
        items.push_back(item.Scalar());
      }
      std::string tuple = "(";  // in steps: GCC 12 warns falsely on "(" + join(...)
      tuple += join(items, ", ");
      tuple += items.size() == 1 ? ",)" : ")";
      return tuple;
    }
    case YAML::NodeType::Map: break;
  }
  throw InputError(yaml_location(node, file) + ": expected a value or a list, found a mapping");
}

std::map<std::string, std::string> yaml_to_attr_strings(const YAML::Node& mapping,
                                                        const std::string& file,
                                                        const std::vector<std::string>& skip) {
  if (!mapping.IsMap()) throw InputError(yaml_location(mapping, file) + ": expected a mapping");
  std::map<std::string, std::string> out;
  for (const auto& entry : mapping) {
    const std::string key = entry.first.Scalar();
    if (std::find(skip.begin(), skip.end(), key) != skip.end()) continue;
    out[key] = yaml_to_attr_string(entry.second, file);
  }
  return out;
}

}  // namespace mx

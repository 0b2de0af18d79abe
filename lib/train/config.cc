#include "train/config.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/error.h"
#include "base/param_value.h"
#include "base/param_yaml.h"
#include "base/strings.h"

namespace mx::train {
namespace fs = std::filesystem;

bool is_opaque_key(const std::string& key) { return key == "network"; }

Config Config::load(const std::string& path, const std::vector<std::string>& overrides) {
  Config c;
  std::vector<std::string> stack;
  c.merge_file(path, stack);
  c.directory_ = fs::path(path).parent_path().string();
  if (c.directory_.empty()) c.directory_ = ".";
  for (const auto& o : overrides) c.apply_override(o);
  return c;
}

Config Config::from_string(const std::string& yaml, const std::string& name,
                           const std::vector<std::string>& overrides) {
  Config c;
  YAML::Node root;
  try {
    root = YAML::Load(yaml);
  } catch (const YAML::Exception& e) {
    throw InputError(str(name, ":", e.mark.line + 1, ":", e.mark.column + 1, ": ", e.msg));
  }
  if (root.IsMap()) c.merge_node(root, "", name);
  for (const auto& o : overrides) c.apply_override(o);
  return c;
}

void Config::merge_file(const std::string& path, std::vector<std::string>& stack) {
  const std::string canonical = fs::weakly_canonical(path).string();
  if (std::find(stack.begin(), stack.end(), canonical) != stack.end())
    throw InputError("config include cycle: " + join(stack, " -> ") + " -> " + path);
  if (!fs::exists(path)) throw InputError("cannot open config '" + path + "': no such file");
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    throw InputError(str(path, ":", e.mark.line + 1, ":", e.mark.column + 1, ": ", e.msg));
  }
  if (root.IsNull()) return;
  if (!root.IsMap()) throw InputError(path + ": a config must be a mapping of sections");
  stack.push_back(canonical);
  if (const auto include = root["include"]) {
    std::vector<std::string> bases;
    if (include.IsScalar())
      bases.push_back(include.Scalar());
    else if (include.IsSequence())
      for (const auto& b : include) bases.push_back(b.Scalar());
    else
      throw InputError(yaml_location(include, path) +
                       ": include must be a file name or a list of them");
    for (const auto& base : bases)
      merge_file((fs::path(path).parent_path() / base).string(), stack);
  }
  stack.pop_back();
  merge_node(root, "", path);
}

void Config::merge_node(const YAML::Node& node, const std::string& prefix,
                        const std::string& file) {
  for (const auto& entry : node) {
    const std::string name = entry.first.Scalar();
    if (prefix.empty() && name == "include") continue;
    const std::string key = prefix.empty() ? name : prefix + "." + name;
    const YAML::Node& value = entry.second;
    if (value.IsMap() && !is_opaque_key(key)) {
      merge_node(value, key, file);
    } else {
      // A later file replaces the whole subtree of an opaque key or a leaf.
      for (auto it = values_.begin(); it != values_.end();)
        it = it->first.rfind(key + ".", 0) == 0 ? values_.erase(it) : std::next(it);
      values_[key] = {value, yaml_location(value, file)};
    }
  }
}

void Config::apply_override(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError("override '" + text + "' is not key=value (e.g. train.batch_size=64)");
  const std::string key = trim(text.substr(0, eq));
  const std::string raw = text.substr(eq + 1);
  for (const auto& [existing, v] : values_)
    if (is_opaque_key(existing) && key.rfind(existing + ".", 0) == 0)
      throw InputError("override '" + text + "': values inside '" + existing +
                       "' cannot be overridden one by one; edit the config");
  YAML::Node value;
  try {
    value = YAML::Load(raw);
  } catch (const YAML::Exception& e) {
    throw InputError("override '" + text + "': " + e.msg);
  }
  if (value.IsNull() && !raw.empty() && raw != "null" && raw != "~") value = YAML::Node(raw);
  set(key, value, "command line: " + text);
}

void Config::set(const std::string& key, const YAML::Node& value, const std::string& origin) {
  if (value.IsMap() && !is_opaque_key(key)) {
    merge_node(value, key, origin);
    return;
  }
  values_[key] = {value, origin};
}

const ConfigValue& Config::at(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end()) throw InputError("config has no '" + key + "'");
  return it->second;
}

std::string Config::origin(const std::string& key) const {
  auto it = values_.find(key);
  return it == values_.end() ? "config" : it->second.origin;
}

std::string Config::get_string(const std::string& key, const std::string& fallback) const {
  if (!has(key)) return fallback;
  const auto& v = at(key);
  if (!v.value.IsScalar()) throw InputError(v.origin + ": '" + key + "' must be a single value");
  return v.value.Scalar();
}

int64_t Config::get_int(const std::string& key, int64_t fallback) const {
  if (!has(key)) return fallback;
  try {
    return param_value::parse_int(get_string(key, ""));
  } catch (const InputError& e) {
    throw InputError(origin(key) + ": '" + key + "': " + e.what());
  }
}

double Config::get_double(const std::string& key, double fallback) const {
  if (!has(key)) return fallback;
  try {
    return param_value::parse_double(get_string(key, ""));
  } catch (const InputError& e) {
    throw InputError(origin(key) + ": '" + key + "': " + e.what());
  }
}

bool Config::get_bool(const std::string& key, bool fallback) const {
  if (!has(key)) return fallback;
  try {
    return param_value::parse_bool(get_string(key, ""));
  } catch (const InputError& e) {
    throw InputError(origin(key) + ": '" + key + "': " + e.what());
  }
}

std::vector<std::string> Config::get_list(const std::string& key,
                                          const std::vector<std::string>& fallback) const {
  if (!has(key)) return fallback;
  const auto& v = at(key);
  if (v.value.IsScalar()) return {v.value.Scalar()};
  if (!v.value.IsSequence()) throw InputError(v.origin + ": '" + key + "' must be a list");
  std::vector<std::string> out;
  for (const auto& item : v.value) {
    if (!item.IsScalar()) throw InputError(v.origin + ": '" + key + "' must be a list of values");
    out.push_back(item.Scalar());
  }
  return out;
}

std::map<std::string, std::string> Config::section(const std::string& prefix) const {
  std::map<std::string, std::string> out;
  const std::string p = prefix + ".";
  for (const auto& [key, v] : values_) {
    if (key.rfind(p, 0) != 0) continue;
    const std::string rest = key.substr(p.size());
    if (rest.find('.') != std::string::npos) continue;
    out[rest] = yaml_to_attr_string(v.value, v.origin);
  }
  return out;
}

std::vector<std::string> Config::keys() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : values_) out.push_back(k);
  return out;
}

void Config::check_keys(const std::vector<std::string>& allowed) const {
  for (const auto& [key, v] : values_) {
    bool ok = false;
    for (const auto& a : allowed) {
      if (a == key) ok = true;
      if (a.size() > 2 && a.compare(a.size() - 2, 2, ".*") == 0 &&
          key.rfind(a.substr(0, a.size() - 1), 0) == 0)
        ok = true;
    }
    if (ok) continue;
    // Suggest among the keys allowed at the same level.
    const auto dot = key.rfind('.');
    const std::string parent = dot == std::string::npos ? "" : key.substr(0, dot + 1);
    std::vector<std::string> siblings;
    for (const auto& a : allowed)
      if (a.rfind(parent, 0) == 0 && a.find('.', parent.size()) == std::string::npos)
        siblings.push_back(a);
    std::vector<std::string> all_names;
    for (const auto& a : allowed) all_names.push_back(a);
    std::string hint = did_you_mean(key, siblings.empty() ? all_names : siblings);
    throw InputError(v.origin + ": unknown key '" + key + "'" + hint);
  }
}

namespace {

// Nested keys for printing: each level maps a name to a value or a subtree.
struct YamlTree {
  std::map<std::string, YamlTree> children;
  const YAML::Node* value = nullptr;
};

void emit(YAML::Emitter& out, const YamlTree& tree) {
  out << YAML::BeginMap;
  for (const auto& [name, child] : tree.children) {
    out << YAML::Key << name << YAML::Value;
    if (child.value)
      out << *child.value;
    else
      emit(out, child);
  }
  out << YAML::EndMap;
}

}  // namespace

std::string Config::to_yaml() const {
  YamlTree root;
  for (const auto& [key, v] : values_) {
    YamlTree* node = &root;
    for (const auto& part : split(key, '.')) node = &node->children[part];
    node->value = &v.value;
  }
  YAML::Emitter out;
  emit(out, root);
  return std::string(out.c_str()) + "\n";
}

}  // namespace mx::train

#include "train/config.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "base/error.h"
#include "base/param_value.h"
#include "base/param_yaml.h"
#include "base/strings.h"

namespace mx::train {
namespace fs = std::filesystem;

bool is_opaque_key(const std::string& key) { return key == "network"; }

namespace {

// YAML is printable Unicode text; yaml-cpp would take control characters
// and bytes that are not UTF-8 as they are and print them back changed, so
// the saved config would not repeat the run. Returns the offset of the
// first such byte, or npos.
size_t first_unprintable(const std::string& text) {
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    size_t extra = 0;
    uint32_t min = 0;
    if (c < 0x80) {
      if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F) return i;
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      extra = 1, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3, min = 0x10000;
    } else {
      return i;
    }
    if (i + extra >= text.size()) return i;  // cut short
    uint32_t code = c & (0x3F >> extra);
    for (size_t k = 1; k <= extra; ++k) {
      const auto b = static_cast<unsigned char>(text[i + k]);
      if ((b & 0xC0) != 0x80) return i;
      code = (code << 6) | (b & 0x3F);
    }
    if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return i;
    i += extra + 1;
  }
  return std::string::npos;
}

// "FILE:LINE:COLUMN" of byte `offset` of `text`.
std::string place_of(const std::string& file, const std::string& text, size_t offset) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return str(file, ":", line, ":", column);
}

// The opaque key that `key` lies inside ("network" for "network.layers"), or "".
std::string opaque_parent(const std::string& key) {
  for (size_t dot = key.find('.'); dot != std::string::npos; dot = key.find('.', dot + 1))
    if (is_opaque_key(key.substr(0, dot))) return key.substr(0, dot);
  return "";
}

// Dotted keys name a path of sections: no part may be empty.
bool has_empty_part(const std::string& key) {
  return key.empty() || key.front() == '.' || key.back() == '.' ||
         key.find("..") != std::string::npos;
}

YAML::Node parse_yaml(const std::string& text, const std::string& file) {
  if (const size_t bad = first_unprintable(text); bad != std::string::npos)
    throw InputError(str(place_of(file, text, bad), ": byte 0x", std::hex,
                         static_cast<int>(static_cast<unsigned char>(text[bad])),
                         " is a control character or not UTF-8; YAML is printable Unicode text"));
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(str(file, ":", e.mark.line + 1, ":", e.mark.column + 1, ": ", e.msg));
  }
}

}  // namespace

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
  const YAML::Node root = parse_yaml(yaml, name);
  if (root.IsMap()) c.merge_node(root, "", name);
  for (const auto& o : overrides) c.apply_override(o);
  return c;
}

void Config::merge_file(const std::string& path, std::vector<std::string>& stack) {
  // The error_code forms: a name the file system refuses (too long, bad
  // characters) is a bad config, not an exception from the library.
  std::error_code ec;
  std::string canonical = fs::weakly_canonical(path, ec).string();
  if (ec) throw InputError("cannot open config '" + path + "': " + ec.message());
  if (std::find(stack.begin(), stack.end(), canonical) != stack.end())
    throw InputError("config include cycle: " + join(stack, " -> ") + " -> " + path);
  if (!fs::exists(path, ec)) {
    throw InputError("cannot open config '" + path +
                     "': " + (ec ? ec.message() : std::string("no such file")));
  }
  std::ifstream file(path, std::ios::binary);
  if (!file || fs::is_directory(path, ec)) throw InputError("cannot read config '" + path + "'");
  const std::string text{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
  const YAML::Node root = parse_yaml(text, path);
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
    if (has_empty_part(name))
      throw InputError(yaml_location(entry.first, file) + ": '" + name +
                       "' is not a key (empty names and empty parts between dots are not)");
    if (prefix.empty() && name == "include") continue;
    // It would print as an include.
    if (prefix.empty() && name.rfind("include.", 0) == 0)
      throw InputError(yaml_location(entry.first, file) + ": '" + name +
                       "': 'include' is reserved for the files a config includes");
    const std::string key = prefix.empty() ? name : prefix + "." + name;
    if (const std::string parent = opaque_parent(key); !parent.empty())
      throw InputError(yaml_location(entry.first, file) + ": '" + name + "': '" + parent +
                       "' is given whole, as a mapping under '" + parent + ":'");
    const YAML::Node& value = entry.second;
    if (value.IsMap() && !is_opaque_key(key)) {
      merge_node(value, key, file);
    } else {
      replace(key, {value, yaml_location(value, file)});
    }
  }
}

void Config::apply_override(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError("override '" + text + "' is not key=value (e.g. train.batch_size=64)");
  const std::string key = trim(text.substr(0, eq));
  const std::string raw = text.substr(eq + 1);
  if (has_empty_part(key))
    throw InputError("override '" + text + "': '" + key +
                     "' is not a key (e.g. train.batch_size=64)");
  if (key == "include" || key.rfind("include.", 0) == 0)
    throw InputError("override '" + text + "': includes are read from the config files only");
  // Keys inside an opaque key (network.layers) do not exist on their own.
  if (const std::string parent = opaque_parent(key); !parent.empty())
    throw InputError("override '" + text + "': values inside '" + parent +
                     "' cannot be overridden one by one; edit the config");
  if (first_unprintable(text) != std::string::npos)
    throw InputError("override '" + text + "': a control character or text that is not UTF-8");
  YAML::Node value;
  try {
    value = YAML::Load(raw);
  } catch (const YAML::Exception& e) {
    throw InputError("override '" + text + "': " + e.msg);
  }
  if (value.IsNull() && !raw.empty() && raw != "null" && raw != "~") value = YAML::Node(raw);
  // `kvstore=dist_sync` on a section written as a mapping with a type
  // (kvstore: {type: local, bigarray_bound: ...}) changes the type and keeps
  // the section's other settings.
  if (value.IsScalar() && has(key + ".type")) {
    set(key + ".type", value, "command line: " + text);
    return;
  }
  set(key, value, "command line: " + text);
}

void Config::set(const std::string& key, const YAML::Node& value, const std::string& origin) {
  if (value.IsMap() && !is_opaque_key(key)) {
    merge_node(value, key, origin);
    return;
  }
  replace(key, {value, origin});
}

void Config::replace(const std::string& key, ConfigValue value) {
  // A later value replaces what it overlaps: the subtree under `key` and a
  // single value at a key above it ("train: 5" then "train.epochs: 2"), so
  // the printed config holds exactly the keys that are set.
  for (auto it = values_.begin(); it != values_.end();) {
    const std::string& k = it->first;
    const bool below = k.rfind(key + ".", 0) == 0, above = key.rfind(k + ".", 0) == 0;
    it = below || above ? values_.erase(it) : std::next(it);
  }
  values_[key] = std::move(value);
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

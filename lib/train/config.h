// Configs: YAML files that may include base configs, overridden from the
// command line with dotted key=value pairs. Every value remembers where it
// came from (file:line:column or the command line), so errors point there,
// and the resolved config prints back as YAML that reproduces the run.
#pragma once

#include <yaml-cpp/yaml.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mx::train {

struct ConfigValue {
  YAML::Node value;    // a scalar, a list, or (for opaque keys like `network`) a mapping
  std::string origin;  // "cfg.yaml:12:3" or "command line: train.lr=0.1"
};

class Config {
 public:
  // Reads `path` and its includes (paths relative to the including file;
  // later files override earlier ones), then applies `overrides`
  // ("train.batch_size=64"; the value is read as YAML).
  static Config load(const std::string& path, const std::vector<std::string>& overrides = {});
  static Config from_string(const std::string& yaml, const std::string& name,
                            const std::vector<std::string>& overrides = {});

  bool has(const std::string& key) const { return values_.count(key) != 0; }
  const ConfigValue& at(const std::string& key) const;
  std::string origin(const std::string& key) const;
  // Typed getters; a bad value is an InputError naming its origin.
  std::string get_string(const std::string& key, const std::string& fallback) const;
  int64_t get_int(const std::string& key, int64_t fallback) const;
  double get_double(const std::string& key, double fallback) const;
  bool get_bool(const std::string& key, bool fallback) const;
  std::vector<std::string> get_list(const std::string& key,
                                    const std::vector<std::string>& fallback) const;

  // Keys directly under `prefix` ("optimizer" -> {"type": ..., "learning_rate": ...}),
  // values as attribute strings (lists as "(a, b)").
  std::map<std::string, std::string> section(const std::string& prefix) const;
  // The keys present (dotted), sorted.
  std::vector<std::string> keys() const;
  std::string directory() const { return directory_; }

  // Throws InputError for the first key that is not allowed: `allowed` holds
  // dotted keys, where "optimizer.*" allows any key under optimizer (checked
  // later by the optimizer's own parameters).
  void check_keys(const std::vector<std::string>& allowed) const;

  // The resolved config as YAML (nested), to print and to save in the run directory.
  std::string to_yaml() const;

  void set(const std::string& key, const YAML::Node& value, const std::string& origin);

 private:
  void merge_file(const std::string& path, std::vector<std::string>& stack);
  void merge_node(const YAML::Node& node, const std::string& prefix, const std::string& file);
  void apply_override(const std::string& text);
  void replace(const std::string& key, ConfigValue value);

  std::map<std::string, ConfigValue> values_;
  std::string directory_ = ".";
};

// Keys whose value is kept whole (a mapping that is not merged key by key).
bool is_opaque_key(const std::string& key);

}  // namespace mx::train

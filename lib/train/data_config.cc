#include "train/data_config.h"

#include "base/error.h"
#include "base/strings.h"
#include "io/data_iter_factory.h"

namespace mx::train {
namespace {

struct TypeInfo {
  const char* short_name;
  const char* mxnet_name;
  bool sharded;   // has num_parts, part_index
  bool shuffled;  // has shuffle
};

// Short names for configs next to MXNet's class names. Text keeps its order
// (TextIter's random_offset is its own, off unless asked for).
const TypeInfo kTypes[] = {{"mnist", "MNISTIter", true, true},
                           {"record", "ImageRecordIter", true, true},
                           {"csv", "CSVIter", true, true},
                           {"synthetic", "SyntheticIter", false, false},
                           {"text", "TextIter", true, false}};

}  // namespace

std::vector<std::string> data_type_names() {
  std::vector<std::string> names;
  for (const auto& t : kTypes) names.push_back(t.short_name);
  return names;
}

namespace {

// A section's iterator (MXNet's name) and its parameters with the trainer's
// defaults filled in.
struct ResolvedSection {
  const TypeInfo* type;
  std::map<std::string, std::string> values;
};

ResolvedSection resolve_section(const Config& config, const std::string& section,
                                const DataDefaults& defaults) {
  auto values = config.section(section);
  if (!values.count("type"))
    throw InputError(config.origin(section) + ": '" + section + "' needs a 'type' (" +
                     join(data_type_names(), ", ") + ")");
  const std::string given = values["type"];
  values.erase("type");
  const TypeInfo* type = nullptr;
  for (const auto& t : kTypes)
    if (to_lower(given) == t.short_name || given == t.mxnet_name) type = &t;
  if (type == nullptr) {
    std::vector<std::string> names = data_type_names();
    for (const auto& t : kTypes) names.push_back(t.mxnet_name);
    throw InputError(config.origin(section + ".type") + ": unknown data type '" + given + "'" +
                     did_you_mean(given, names) + "; types: " + join(data_type_names(), ", "));
  }
  // The trainer's settings, unless the section gives its own.
  auto fill = [&](const std::string& key, const std::string& value) {
    if (!values.count(key)) values[key] = value;
  };
  if (defaults.batch_size > 0) fill("batch_size", std::to_string(defaults.batch_size));
  if (type->sharded) {
    fill("seed", std::to_string(defaults.seed));
    if (type->shuffled) fill("shuffle", defaults.shuffle ? "True" : "False");
    fill("num_parts", std::to_string(defaults.num_parts));
    fill("part_index", std::to_string(defaults.part_index));
  } else {
    // Generated data: each worker's own seed gives it its own examples.
    fill("seed", std::to_string(defaults.seed + defaults.part_index));
  }
  return {type, values};
}

// Runs `make` and puts the place of the key its error names (else of the
// section's type) in front of the message.
template <typename Make>
auto at_named_key(const Config& config, const std::string& section,
                  const std::map<std::string, std::string>& values, Make make) {
  try {
    return make();
  } catch (const InputError& e) {
    std::string where = config.origin(section + ".type");
    const std::string what = e.what();
    for (const auto& [key, v] : values)
      if (what.find("'" + key + "'") != std::string::npos && config.has(section + "." + key)) {
        where = config.origin(section + "." + key);
        break;
      }
    throw InputError(where + ": " + what);
  }
}

}  // namespace

std::unique_ptr<DataIter> make_data_iter(const Config& config, const std::string& section,
                                         const DataDefaults& defaults) {
  const ResolvedSection r = resolve_section(config, section, defaults);
  return at_named_key(config, section, r.values,
                      [&] { return create_data_iter(r.type->mxnet_name, r.values, section); });
}

void check_data_section(const Config& config, const std::string& section,
                        const DataDefaults& defaults) {
  const ResolvedSection r = resolve_section(config, section, defaults);
  at_named_key(config, section, r.values,
               [&] { check_data_iter_params(r.type->mxnet_name, r.values, section); });
}

}  // namespace mx::train

#include "train/config_check.h"

#include "base/error.h"
#include "metric/metric.h"
#include "optim/initializer.h"
#include "train/data_config.h"

namespace mx::train {
namespace {

void check_initializer(const Config& c, uint64_t seed) {
  auto params = c.section("initializer");
  const std::string type = params.count("type") ? params["type"] : "xavier";
  params.erase("type");
  try {
    optim::make_initializer(type, params, seed);
  } catch (const InputError& e) {
    // The key the message names, else the type.
    const std::string what = e.what();
    std::string key = c.has("initializer.type") ? "initializer.type" : "initializer";
    for (const auto& [name, value] : params)
      if (what.find("'" + name + "'") != std::string::npos && c.has("initializer." + name)) {
        key = "initializer." + name;
        break;
      }
    throw InputError(c.origin(key) + ": " + what);
  }
}

void check_metrics(const Config& c, const TrainSettings& s) {
  try {
    metric::make_composite(s.metric_names);
  } catch (const InputError& e) {
    throw InputError(c.origin("train.metrics") + ": " + e.what());
  }
}

}  // namespace

void check_config_values(const Config& c, const TrainSettings& s) {
  check_metrics(c, s);
  check_initializer(c, s.seed);
  DataDefaults defaults;
  defaults.batch_size = s.batch_size;
  defaults.seed = static_cast<int>(s.seed);
  if (!c.has("data.train.type")) throw InputError("the config needs data.train (with a type)");
  check_data_section(c, "data.train", defaults);
  defaults.shuffle = false;
  if (c.has("data.val.type") || !c.section("data.val").empty())
    check_data_section(c, "data.val", defaults);
}

}  // namespace mx::train

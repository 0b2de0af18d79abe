#include "kvstore/optimizer_spec.h"

#include <nlohmann/json.hpp>

#include "base/error.h"

namespace mx::kvstore {

std::string serialize_optimizer(optim::Optimizer& optimizer) {
  nlohmann::json j;
  j["format"] = "mx-optimizer";
  j["name"] = optimizer.name();
  j["params"] = optimizer.params();
  j["lr_scheduler"] = optimizer.lr_scheduler() ? optimizer.lr_scheduler()->state() : nullptr;
  nlohmann::json names = nlohmann::json::object(), lr = nlohmann::json::object(),
                 wd = nlohmann::json::object();
  for (const auto& [index, name] : optimizer.param_names()) {
    names[std::to_string(index)] = name;
    lr[name] = optimizer.lr_mult(index);
    wd[name] = optimizer.wd_mult(index);
  }
  j["param_names"] = names;
  j["lr_mult"] = lr;
  j["wd_mult"] = wd;
  return j.dump();
}

std::unique_ptr<optim::Optimizer> deserialize_optimizer(const std::string& text,
                                                        const std::string& source) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(source + ": optimizer description is not valid JSON: " + e.what());
  }
  try {
    if (!j.is_object() || j.value("format", "") != "mx-optimizer")
      throw InputError(source + ": not an optimizer description");
    auto optimizer = optim::make_optimizer(
        j.at("name").get<std::string>(), j.at("params").get<std::map<std::string, std::string>>());
    const auto& sched = j.at("lr_scheduler");
    if (!sched.is_null()) {
      optimizer->set_lr_scheduler(
          optim::make_lr_scheduler(sched.at("type").get<std::string>(),
                                   sched.at("params").get<std::map<std::string, std::string>>(),
                                   sched.at("base_lr").get<double>()));
      optimizer->lr_scheduler()->load_state(sched, source);
    }
    std::map<int, std::string> names;
    for (const auto& [index, name] : j.at("param_names").items())
      names[std::stoi(index)] = name.get<std::string>();
    optimizer->set_param_names(names);
    optimizer->set_lr_mult(j.at("lr_mult").get<std::map<std::string, double>>());
    optimizer->set_wd_mult(j.at("wd_mult").get<std::map<std::string, double>>());
    return optimizer;
  } catch (const nlohmann::json::exception& e) {
    throw InputError(source + ": malformed optimizer description: " + e.what());
  } catch (const std::invalid_argument& e) {
    throw InputError(source + ": malformed optimizer description: " + e.what());
  }
}

}  // namespace mx::kvstore

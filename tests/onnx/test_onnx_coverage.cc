// Every operator of the registry is accounted for by ONNX export: it has an
// export rule or an entry, with the reason, among unexported_operators()
// (lib/onnx/unexported_ops.cc), never both and never neither, and both lists
// name registered operators only. What test_gpu_kernel_coverage is for the
// CUDA kernels, this is for ONNX: a new operator cannot be forgotten here.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "base/strings.h"
#include "onnx/export.h"
#include "op/registry.h"

using namespace mx;

TEST_CASE("every registered operator has an ONNX export rule or a stated reason for none") {
  const auto& registry = op::OpRegistry::get();
  const std::set<std::string> exported = [] {
    const auto names = mx::onnx::exportable_operators();
    return std::set<std::string>(names.begin(), names.end());
  }();
  const auto& refused = mx::onnx::unexported_operators();

  std::vector<std::string> neither, both;
  for (const op::OpDef* def : registry.list()) {
    const bool has_rule = exported.count(def->name) > 0;
    const bool has_reason = refused.count(def->name) > 0;
    if (!has_rule && !has_reason) neither.push_back(def->name);
    if (has_rule && has_reason) both.push_back(def->name);
  }
  INFO("add an export rule (lib/onnx/export_ops.cc) or a reason (lib/onnx/unexported_ops.cc)");
  CHECK_MESSAGE(neither.empty(), "neither a rule nor a reason: " << join(neither, ", "));
  CHECK_MESSAGE(both.empty(), "both a rule and a reason: " << join(both, ", "));

  std::vector<std::string> unknown;
  for (const auto& name : exported)
    if (registry.lookup(name) == nullptr || registry.lookup(name)->name != name)
      unknown.push_back("rule " + name);
  for (const auto& [name, reason] : refused) {
    if (registry.lookup(name) == nullptr || registry.lookup(name)->name != name)
      unknown.push_back("reason " + name);
    CHECK_MESSAGE(!reason.empty(), name << " has an empty reason");
  }
  CHECK_MESSAGE(unknown.empty(), "not registered operators (or aliases): " << join(unknown, ", "));
}

// Operator coverage as ggml checks it: every registered operator has a
// reference case (values from MXNet 1.9.1) and, when it has a gradient, a
// finite-difference gradient check. The op tests record what they ran (by
// registered name, see op_harness.h) in the files MX_OP_COVERAGE_FILES names; ctest runs them
// first (a fixture), so `ctest -R test_op_coverage` alone works too.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "base/strings.h"
#include "op/registry.h"

using namespace mx;

namespace {

// Operators that cannot have a case of a kind, and why. Keep this short.
const std::map<std::string, std::string> kNoReference = {};
const std::map<std::string, std::string> kNoGradientCheck = {
    {"BlockGrad",
     "its gradient is 0 by definition, not the derivative of its identity forward "
     "(test_ops_elemwise: 'BlockGrad passes values and stops the gradient')"}};

std::set<std::string> recorded(const std::string& kind) {
  std::set<std::string> ops;
  for (const std::string& file : split(MX_OP_COVERAGE_FILES, ',')) {
    INFO("coverage file ", file, " (written by the op tests; run them first)");
    std::ifstream in(file);
    REQUIRE(in.good());
    std::string line;
    while (std::getline(in, line)) {
      auto space = line.find(' ');
      if (space != std::string::npos && line.substr(0, space) == kind)
        ops.insert(line.substr(space + 1));
    }
  }
  return ops;
}

}  // namespace

TEST_CASE("every registered operator has a reference case and, with a gradient, a gradient check") {
  const auto reference = recorded("reference");
  const auto gradient = recorded("gradient");
  CHECK(reference.size() >= 30);
  std::vector<std::string> missing;
  for (const op::OpDef* def : op::OpRegistry::get().list()) {
    if (!reference.count(def->name) && !kNoReference.count(def->name))
      missing.push_back(def->name + ": no reference case (scripts/fixtures/op_cases)");
    if (def->has_backward() && !gradient.count(def->name) && !kNoGradientCheck.count(def->name))
      missing.push_back(def->name + ": no gradient check (check_gradient in tests/op)");
  }
  INFO(join(missing, "\n"));
  CHECK(missing.empty());
  // Exceptions must name registered operators (a renamed one would hide).
  for (const auto* list : {&kNoReference, &kNoGradientCheck})
    for (const auto& [name, why] : *list) CHECK(op::OpRegistry::get().lookup(name) != nullptr);
}

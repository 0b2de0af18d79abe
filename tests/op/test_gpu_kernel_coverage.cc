// GPU kernel coverage (label gpu, runs without a GPU): every operator with a
// CPU kernel has a GPU forward kernel, and a GPU backward kernel where it has
// a CPU one, or is listed below with the reason. test_ops_gpu compares each
// GPU kernel with the CPU's on the op harness's cases.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/gpu.h"
#include "base/strings.h"
#include "op/registry.h"

using namespace mx;

namespace {

// Operators that will never have a GPU kernel, and why. Keep this short.
const std::map<std::string, std::string> kNoGpuKernel = {};

// Operators whose GPU kernels are not written yet (issue 10). Remove an
// operator from here when its kernels land: the test fails for an operator
// that is listed and has them.
const std::set<std::string> kGpuKernelPending = {};

}  // namespace

TEST_CASE("every operator has a GPU kernel or a stated reason") {
  if (!gpu::compiled_with_cuda()) {
    MESSAGE("this build has no CUDA (MX_USE_CUDA=OFF): no GPU kernels to check");
    return;
  }
  std::vector<std::string> problems;
  for (const op::OpDef* def : op::OpRegistry::get().list()) {
    const std::string& name = def->name;
    const bool listed = kNoGpuKernel.count(name) > 0 || kGpuKernelPending.count(name) > 0;
    const bool forward = def->has_kernel(DeviceKind::kGPU);
    const bool backward_needed =
        static_cast<bool>(def->backward[static_cast<int>(DeviceKind::kCPU)]);
    const bool backward = static_cast<bool>(def->backward[static_cast<int>(DeviceKind::kGPU)]);
    if (!def->has_kernel(DeviceKind::kCPU)) continue;
    if (listed && forward) {
      problems.push_back(name + ": has a GPU kernel now; remove it from the lists in this test");
    } else if (!listed && !forward) {
      problems.push_back(
          name + ": no GPU kernel (write one in lib/op/cuda, or list it here with the reason)");
    } else if (forward && backward_needed && !backward) {
      problems.push_back(name + ": a GPU forward kernel but no GPU backward kernel");
    }
  }
  INFO(join(problems, "\n"));
  CHECK(problems.empty());
  // The lists name registered operators (a renamed one would hide).
  for (const auto& [name, why] : kNoGpuKernel) CHECK(op::OpRegistry::get().lookup(name) != nullptr);
  for (const auto& name : kGpuKernelPending) CHECK(op::OpRegistry::get().lookup(name) != nullptr);
}

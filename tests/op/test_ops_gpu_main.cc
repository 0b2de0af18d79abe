// The GPU operator harness (test_ops_gpu, label gpu): the family tests
// (test_ops_nn.cc, test_ops_tensor.cc, ...) and the tests of operators made by
// scripts/new-op.sh (test_ops_<stem>.cc) compiled a second time with
// MX_OP_HARNESS_GPU=1, so that every gradient case runs on gpu:0 against the
// CPU and every reference case runs on gpu:0 (op_harness.h).
// Without a GPU it prints one line and exits with the code ctest reports as
// skipped.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstring>
#include <iostream>

#include "base/gpu.h"
#include "op_harness.h"

namespace {

// ctest's SKIP_RETURN_CODE for this executable (tests/CMakeLists.txt).
constexpr int kSkipped = 77;

bool names_test_cases(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    while (*a == '-') ++a;
    if (std::strncmp(a, "tc=", 3) == 0 || std::strncmp(a, "test-case=", 10) == 0 ||
        std::strncmp(a, "dt-tc=", 6) == 0 || std::strncmp(a, "dt-test-case=", 13) == 0)
      return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  // MX_HARNESS_DEVICE=cpu:1 tests the harness itself without a GPU.
  if (mx::test::harness_device().is_gpu() && !mx::test::gpu_present()) {
    std::cout << "no GPU found (CUDA build: " << (mx::gpu::compiled_with_cuda() ? "yes" : "no")
              << "): GPU operator tests skipped\n";
    return kSkipped;
  }
  doctest::Context context;
  // The harness's cases only (and test_ops_amp.cc's 16-bit comparison on
  // the GPU): the family files' other tests are about the CPU kernels and
  // run in test_ops_* already.
  if (!names_test_cases(argc, argv))
    context.setOption("test-case", "gradients:*,reference:*,low precision on the harness device*");
  context.applyCommandLine(argc, argv);
  return context.run();
}

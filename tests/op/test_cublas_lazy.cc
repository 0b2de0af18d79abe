// cuBLAS is opened on first use (lib/op/cuda/cublas_lazy.cc), so a process
// that never runs a GPU GEMM does not pay cuBLASLt's ~210 MB of resident
// memory. Runs without a GPU: only the library's loading and forwarding are
// checked, not a product.
#include <doctest/doctest.h>

#include <fstream>
#include <string>

#if MX_USE_CUDA
#include <cublas_v2.h>
#endif

#include "op/registry.h"

namespace {

[[maybe_unused]] bool mapped(const std::string& library) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.find(library) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("cuBLAS is loaded when first called, not with the program") {
#if MX_USE_CUDA
  // The operator registry holds the GPU kernels that call cuBLAS.
  CHECK(mx::op::OpRegistry::get().lookup("FullyConnected") != nullptr);
  CHECK_FALSE(mapped("libcublas"));
  // A status text needs no GPU; it goes through the loaded library.
  CHECK(std::string(cublasGetStatusName(CUBLAS_STATUS_SUCCESS)) == "CUBLAS_STATUS_SUCCESS");
  CHECK(mapped("libcublasLt"));
  CHECK(std::string(cublasGetStatusName(CUBLAS_STATUS_INVALID_VALUE)) ==
        "CUBLAS_STATUS_INVALID_VALUE");
#else
  MESSAGE("built without CUDA: no cuBLAS to load");
#endif
}

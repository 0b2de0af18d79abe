// cuBLAS is loaded on first use instead of being linked: loading it pulls in
// cuBLASLt, whose start-up costs every process about 210 MB of resident
// memory (measured on CUDA 13), CPU-only runs and `mx-ops` included. This file
// defines the few cuBLAS functions mx calls; each forwards to the library,
// opened with dlopen the first time one is called. The definitions must
// match cublas_api.h's declarations (the compiler checks it: they are the
// same extern "C" functions), and `cuda/cublas_gemm.cc` and `cuda/handles.cc`
// call them as usual.
#include <cublas_v2.h>
#include <dlfcn.h>

#include <mutex>
#include <string>

#include "base/error.h"

namespace mx::op::cuda {
namespace {

// The library's handle, opened once; throws when it cannot be opened.
void* cublas_library() {
  static std::once_flag once;
  static void* library = nullptr;
  static std::string failure;
  std::call_once(once, [] {
    const std::string name = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
    library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      const char* why = dlerror();
      failure = str("cannot load ", name, " (cuBLAS, for FullyConnected, dot and batch_dot on ",
                    "the GPU): ", why != nullptr ? why : "unknown error");
    }
  });
  if (library == nullptr) throw Error(failure);
  return library;
}

// The function `name` of the library, as a pointer of type F; looked up once
// per function (the static lives in each instantiation's caller).
template <typename F>
F symbol(const char* name) {
  void* address = dlsym(cublas_library(), name);
  if (address == nullptr) throw Error(str("cuBLAS has no function ", name, ": ", dlerror()));
  return reinterpret_cast<F>(address);
}

}  // namespace
}  // namespace mx::op::cuda

// Each forwarder looks its function up once (thread-safe static init).
#define MX_CUBLAS_FORWARD(name, ...)                                       \
  static const auto real = ::mx::op::cuda::symbol<decltype(&name)>(#name); \
  return real(__VA_ARGS__)
// The same for a name that cublas_v2.h also overloads in C++ (the C
// function's type given).
#define MX_CUBLAS_FORWARD_AS(type, name, ...)                   \
  static const auto real = ::mx::op::cuda::symbol<type>(#name); \
  return real(__VA_ARGS__)

extern "C" {

cublasStatus_t cublasCreate_v2(cublasHandle_t* handle) {
  MX_CUBLAS_FORWARD(cublasCreate_v2, handle);
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
  MX_CUBLAS_FORWARD(cublasSetStream_v2, handle, stream);
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  MX_CUBLAS_FORWARD(cublasSetMathMode, handle, mode);
}

// Status texts are asked for while reporting a failure, possibly one of
// loading the library itself: never throw from them.
const char* cublasGetStatusName(cublasStatus_t status) {
  try {
    MX_CUBLAS_FORWARD(cublasGetStatusName, status);
  } catch (...) {
    return "CUBLAS_STATUS_(library not loaded)";
  }
}

const char* cublasGetStatusString(cublasStatus_t status) {
  try {
    MX_CUBLAS_FORWARD(cublasGetStatusString, status);
  } catch (...) {
    return "cuBLAS could not be loaded";
  }
}

cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                              cublasOperation_t transb, int m, int n, int k, const float* alpha,
                              const float* A, int lda, const float* B, int ldb, const float* beta,
                              float* C, int ldc) {
  MX_CUBLAS_FORWARD(cublasSgemm_v2, handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C,
                    ldc);
}

cublasStatus_t cublasDgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                              cublasOperation_t transb, int m, int n, int k, const double* alpha,
                              const double* A, int lda, const double* B, int ldb,
                              const double* beta, double* C, int ldc) {
  MX_CUBLAS_FORWARD(cublasDgemm_v2, handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C,
                    ldc);
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k,
                                         const float* alpha, const float* A, int lda,
                                         long long int strideA, const float* B, int ldb,
                                         long long int strideB, const float* beta, float* C,
                                         int ldc, long long int strideC, int batchCount) {
  MX_CUBLAS_FORWARD(cublasSgemmStridedBatched, handle, transa, transb, m, n, k, alpha, A, lda,
                    strideA, B, ldb, strideB, beta, C, ldc, strideC, batchCount);
}

cublasStatus_t cublasDgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k,
                                         const double* alpha, const double* A, int lda,
                                         long long int strideA, const double* B, int ldb,
                                         long long int strideB, const double* beta, double* C,
                                         int ldc, long long int strideC, int batchCount) {
  MX_CUBLAS_FORWARD(cublasDgemmStridedBatched, handle, transa, transb, m, n, k, alpha, A, lda,
                    strideA, B, ldb, strideB, beta, C, ldc, strideC, batchCount);
}

// float16 and bfloat16 products (mixed precision), float32 sums.
cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                            cublasOperation_t transb, int m, int n, int k, const void* alpha,
                            const void* A, cudaDataType Atype, int lda, const void* B,
                            cudaDataType Btype, int ldb, const void* beta, void* C,
                            cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
                            cublasGemmAlgo_t algo) {
  using Fn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                const void*, const void*, cudaDataType, int, const void*,
                                cudaDataType, int, const void*, void*, cudaDataType, int,
                                cublasComputeType_t, cublasGemmAlgo_t);
  MX_CUBLAS_FORWARD_AS(Fn, cublasGemmEx, handle, transa, transb, m, n, k, alpha, A, Atype, lda, B,
                       Btype, ldb, beta, C, Ctype, ldc, computeType, algo);
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
                                          cublasOperation_t transb, int m, int n, int k,
                                          const void* alpha, const void* A, cudaDataType Atype,
                                          int lda, long long int strideA, const void* B,
                                          cudaDataType Btype, int ldb, long long int strideB,
                                          const void* beta, void* C, cudaDataType Ctype, int ldc,
                                          long long int strideC, int batchCount,
                                          cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  using Fn = cublasStatus_t (*)(
      cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*, const void*,
      cudaDataType, int, long long int, const void*, cudaDataType, int, long long int, const void*,
      void*, cudaDataType, int, long long int, int, cublasComputeType_t, cublasGemmAlgo_t);
  MX_CUBLAS_FORWARD_AS(Fn, cublasGemmStridedBatchedEx, handle, transa, transb, m, n, k, alpha, A,
                       Atype, lda, strideA, B, Btype, ldb, strideB, beta, C, Ctype, ldc, strideC,
                       batchCount, computeType, algo);
}

}  // extern "C"

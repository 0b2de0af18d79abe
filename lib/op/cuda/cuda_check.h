// Return-code checks for the CUDA runtime, cuBLAS and cuDNN: every call the
// GPU backend makes goes through one of these, and a failure becomes an
// mx::Error naming the call and the operator that made it, e.g.
//   "Convolution: cudnnConvolutionForward failed: CUDNN_STATUS_BAD_PARAM".
// Only compiled with MX_USE_CUDA (included by .cu files and the cuDNN/cuBLAS
// wrappers). NCCL's check lives with its only user in kvstore/.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <string_view>

#include "base/error.h"

namespace mx::op::cuda {

// "cudnnConvolutionForward(handle, ...)" -> "cudnnConvolutionForward".
inline std::string_view call_name(std::string_view text) { return text.substr(0, text.find('(')); }

// `call` is the API call (its text; the name is kept), `where` the operator
// or component that made it.
inline void check(cudaError_t err, std::string_view call, std::string_view where) {
  if (err != cudaSuccess) {
    cudaGetLastError();  // clear a non-sticky error so the device stays usable
    throw Error(str(where, ": ", call_name(call), " failed: ", cudaGetErrorName(err), " (",
                    cudaGetErrorString(err), ")"));
  }
}
inline void check(cublasStatus_t status, std::string_view call, std::string_view where) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw Error(str(where, ": ", call_name(call), " failed: ", cublasGetStatusName(status), " (",
                    cublasGetStatusString(status), ")"));
}
inline void check(cudnnStatus_t status, std::string_view call, std::string_view where) {
  if (status != CUDNN_STATUS_SUCCESS)
    throw Error(str(where, ": ", call_name(call), " failed: ", cudnnGetErrorString(status)));
}

// After a kernel launch: launch failures (bad configuration, no kernel image
// for this GPU) are reported at once; faults inside the kernel surface at
// the stream synchronization that ends the engine operation.
inline void check_launch(std::string_view kernel, std::string_view where) {
  check(cudaGetLastError(), kernel, where);
}

}  // namespace mx::op::cuda

// MX_CUDA_CHECK(cudaMemcpyAsync(...), "Concat"): the call's name comes from its text.
#define MX_CUDA_CHECK(call, where) ::mx::op::cuda::check((call), #call, (where))

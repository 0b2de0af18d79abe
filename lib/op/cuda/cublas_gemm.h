// Row-major matrix products on the GPU through cuBLAS, with the request
// semantics of the operators: kNull computes nothing, kAdd adds to C
// (beta 1), kWrite and kInplace overwrite it (beta 0, C never read).
// Workspace-free. Declared with project types only, so the operator .cc
// files that register GPU kernels include it without CUDA headers.
#pragma once

#include <cstdint>
#include <string_view>

#include "base/dtype.h"
#include "engine/engine.h"
#include "op/cuda/gemm_args.h"
#include "op/tensor_ref.h"

namespace mx::op::cuda {

// C (req) alpha op(A) op(B) for each of `batch.batch` products on the
// stream of `rctx`; `where` names the operator in errors.
void gemm(const RunContext& rctx, std::string_view where, const RowMajorGemm& g, const float* a,
          const float* b, float* c, OpReq req, const BatchStrides& batch = {}, double alpha = 1.0);
void gemm(const RunContext& rctx, std::string_view where, const RowMajorGemm& g, const double* a,
          const double* b, double* c, OpReq req, const BatchStrides& batch = {},
          double alpha = 1.0);
// float16 and bfloat16 products sum in float32 (tensor cores; mixed precision).
void gemm(const RunContext& rctx, std::string_view where, const RowMajorGemm& g, const half_t* a,
          const half_t* b, half_t* c, OpReq req, const BatchStrides& batch = {},
          double alpha = 1.0);
void gemm(const RunContext& rctx, std::string_view where, const RowMajorGemm& g, const bf16_t* a,
          const bf16_t* b, bf16_t* c, OpReq req, const BatchStrides& batch = {},
          double alpha = 1.0);

}  // namespace mx::op::cuda

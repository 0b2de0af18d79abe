// oneDNN inner-product kernels for FullyConnected: X (rows, k), W (hidden, k),
// Y (rows, hidden), all row-major, every array in the geometry's dtype
// (float32, or bfloat16 with float32 accumulation inside oneDNN).
#pragma once

#include <cstdint>
#include <optional>

#include "op/dnnl/dnnl_context.h"
#include "op/resources.h"
#include "op/tensor_ref.h"

namespace mx::op::dnnl_impl {

struct FcGeom {
  int64_t rows = 0, features = 0, hidden = 0;
  DType dtype = DType::kFloat32;
};

// oneDNN's inner product costs ~0.1 ms a call more than the OpenBLAS GEMM
// for a layer of a few outputs (LeNet's 500 -> 10: 0.13 vs 0.02 ms forward,
// 0.14 vs 0.03 ms backward, bench_ops --net lenet --impl both), where the
// GEMM is all overhead; from 32 outputs on oneDNN is at least as fast.
inline bool fc_worth_it(const FcGeom& g) { return g.hidden >= 32; }

// y (req) = x w^T + bias (bias may be null). With `w_stamp` (inference) the
// weights are reordered once per content, not per call.
void fc_forward(const FcGeom& g, const void* x, const void* w, const void* bias, void* y, OpReq req,
                const OpResources& res, std::optional<ContentStamp> w_stamp = std::nullopt);

// dx (dx_req) = dy w; dw (dw_req) = dy^T x; db (db_req; may be null) = column sums of dy.
void fc_backward(const FcGeom& g, const void* x, const void* w, const void* dy, void* dx,
                 OpReq dx_req, void* dw, OpReq dw_req, void* db, OpReq db_req,
                 const OpResources& res);

}  // namespace mx::op::dnnl_impl

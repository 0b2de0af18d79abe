// Convolution passes on cuDNN for Convolution and Deconvolution (a
// deconvolution is written in terms of the passes of its transposed
// convolution, as on the CPU). Project types only, so the operator file
// includes it without the CUDA headers; only built with MX_USE_CUDA.
//
// Each pass chooses its algorithm once per (pass, shapes, parameters, dtype,
// policy, workspace limit, device) and caches it; the workspace comes from
// the operator's TempSpace resource. float32 runs without TF32 so results
// compare with the CPU's. `req`: kWrite/kInplace overwrite, kAdd adds,
// kNull does nothing.
#pragma once

#include <cstddef>
#include <initializer_list>

#include "base/dtype.h"
#include "engine/engine.h"
#include "op/cuda/conv_algo.h"
#include "op/nn/conv_util.h"
#include "op/resources.h"
#include "op/tensor_ref.h"

namespace mx::op::cuda {

// What every pass of one convolution shares.
struct CudnnConv {
  ConvGeom geom;
  DType dtype = DType::kFloat32;
  AlgoPolicy policy = AlgoPolicy::kFitWorkspace;
  size_t workspace_limit = 0;  // bytes
  const char* op = "Convolution";
};

// y (N, K, Ho, Wo) = conv(x (N, C, H, W), w).
void cudnn_conv_forward(const CudnnConv& conv, const RunContext& rctx, const OpResources& res,
                        const void* x, const void* w, void* y, OpReq req);
// dx from dy and w.
void cudnn_conv_backward_data(const CudnnConv& conv, const RunContext& rctx, const OpResources& res,
                              const void* dy, const void* w, void* dx, OpReq req);
// dw from x and dy.
void cudnn_conv_backward_filter(const CudnnConv& conv, const RunContext& rctx,
                                const OpResources& res, const void* x, const void* dy, void* dw,
                                OpReq req);

// Takes the workspace the largest of `passes` needs before any runs: an
// operator that runs two passes calls it first, so that the second pass's
// request never moves the TempSpace block the first is still using.
void cudnn_conv_reserve(const CudnnConv& conv, std::initializer_list<ConvPass> passes,
                        const RunContext& rctx, const OpResources& res);

// y[n, c, :] += bias[c] for y (batch, channels, plane); float16 and bfloat16
// through channel_bias_gpu.h.
void cudnn_add_bias(const char* op, DType dtype, const RunContext& rctx, const void* bias, void* y,
                    int64_t batch, int64_t channels, int64_t plane);
// db[c] (req) = sum over images and positions of dy (batch, channels, plane).
void cudnn_bias_gradient(const char* op, DType dtype, const RunContext& rctx, const void* dy,
                         int64_t batch, int64_t channels, int64_t plane, void* db, OpReq req);

}  // namespace mx::op::cuda

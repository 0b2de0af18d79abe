// cuBLAS and cuDNN handles, one per CUDA stream (each GPU worker thread of
// the engine owns one stream, so a handle is never used by two threads at
// once). Created on first use with the stream bound; kept for the life of the
// process, like the other registries operations use (engine operations may
// still run while static objects are destroyed at exit).
#pragma once

#include <cublas_v2.h>
#include <cudnn.h>

#include "engine/engine.h"

namespace mx::op::cuda {

// The handle for the stream of `rctx` (a GPU operation's run context).
cublasHandle_t cublas_handle(const RunContext& rctx);
cudnnHandle_t cudnn_handle(const RunContext& rctx);

}  // namespace mx::op::cuda

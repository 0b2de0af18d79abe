// Convolution passes through cuDNN's graph (backend) API. The legacy API
// (cudnnFindConvolution*Algorithm) only reaches cuDNN's eight legacy
// algorithms per pass; the graph API's engines include newer kernels, and on
// an H200 the legacy API's best choices for ResNet-50 took 59 ms per training
// step where PyTorch's (graph API) convolutions took 49 ms
// (docs/gpu.md, "Where the time goes"). A pass is one operation graph; its
// engine configurations come from cuDNN's heuristics, filtered by what mx
// allows (no TF32 or down-converted inputs for float32 unless MX_GPU_TF32=1,
// no runtime-compiled kernels), and the fastest is measured on scratch buffers, as cudnnFind does.
// The convolution then takes whichever of the two APIs' choices measured
// faster for the pass.
// Only compiled with MX_USE_CUDA.
#pragma once

#include <cuda_runtime.h>
#include <cudnn.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "base/dtype.h"
#include "op/cuda/conv_algo.h"

namespace mx::op::cuda {

// One pass of one convolution as a finalized execution plan.
class GraphConvPlan {
 public:
  GraphConvPlan(cudnnBackendDescriptor_t plan, size_t workspace, int64_t engine);
  ~GraphConvPlan();
  GraphConvPlan(const GraphConvPlan&) = delete;
  GraphConvPlan& operator=(const GraphConvPlan&) = delete;

  size_t workspace() const { return workspace_; }
  int64_t engine() const { return engine_; }
  // Milliseconds per run, as measured when it was chosen.
  float measured_ms() const { return measured_ms_; }
  void set_measured_ms(float ms) { measured_ms_ = ms; }
  // Runs the pass. x, w and y are the convolution's input, filter and output
  // as in the forward pass (the pass writes dx, dw or y); `workspace` holds
  // workspace() bytes. Returns cuDNN's status.
  cudnnStatus_t execute(cudnnHandle_t handle, const void* x, const void* w, const void* y,
                        void* workspace) const;

 private:
  cudnnBackendDescriptor_t plan_;
  size_t workspace_;
  int64_t engine_;
  float measured_ms_ = 0;
};

// What to find a plan for.
struct GraphConvRequest {
  ConvPass pass = ConvPass::kForward;
  CudnnConvShape shape;
  DType dtype = DType::kFloat32;
  bool accumulate = false;  // beta = 1 (OpReq::kAdd)
  AlgoPolicy policy = AlgoPolicy::kFitWorkspace;
  size_t workspace_limit = 0;
  int64_t alignment = 16;  // bytes the data pointers are aligned to
  int device = 0;
  const char* op = "Convolution";
};

// The fastest qualifying plan, measured on `stream` with scratch buffers of
// its own (the stream is waited for before it returns); nullptr when cuDNN's
// graph API offers none that qualifies, fits the workspace limit and runs,
// or when there is no memory to measure on. The caller compares its time
// with the legacy API's choice (cudnn_convolution.cc).
std::shared_ptr<const GraphConvPlan> find_graph_conv_plan(const GraphConvRequest& r,
                                                          cudnnHandle_t handle,
                                                          cudaStream_t stream);

}  // namespace mx::op::cuda

#include "op/cuda/cudnn_convolution.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/logging.h"
#include "op/cuda/channel_bias_gpu.h"
#include "op/cuda/cuda_check.h"
#include "op/cuda/cudnn_descriptors.h"
#include "op/cuda/cudnn_graph_conv.h"
#include "op/cuda/handles.h"
#include "op/cuda/math_settings.h"

namespace mx::op::cuda {
namespace {

// The algorithm of one cached pass and the math type cuDNN reported for it
// (cuDNN picks its kernels from both).
struct AlgoChoice {
  int algo = 0;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
  size_t workspace = 0;
  float time_ms = -1;  // as cudnnFind measured it; < 0: not measured
  // Set when cuDNN's graph API serves the pass (algo and math are unused).
  std::shared_ptr<const GraphConvPlan> plan;
};

// What a pass's choice depends on beyond the convolution: beta (the graph
// API builds it into the plan) and the data pointers' alignment.
struct PassData {
  bool accumulate = false;
  int64_t alignment = 16;
};

// The alignment (up to 16 bytes) all of `pointers` share.
int64_t alignment_of(std::initializer_list<const void*> pointers) {
  int64_t alignment = 16;
  for (const void* p : pointers) {
    const auto address = reinterpret_cast<uintptr_t>(p);
    if (address != 0)
      alignment = std::min<int64_t>(alignment, static_cast<int64_t>(address & (~address + 1)));
  }
  return alignment;
}

// Chosen algorithms by conv_algo_key; created on first use and never
// destroyed (operations may still run while static objects are destroyed).
struct AlgoCache {
  std::mutex mutex;
  std::unordered_map<std::string, AlgoChoice> by_key;
};

AlgoCache& algo_cache() {
  static auto* cache = new AlgoCache;
  return *cache;
}

// float32 runs on FMA kernels only: CUDNN_DEFAULT_MATH lets Ampere and later
// use TF32 tensor cores, whose 10-bit mantissa would not compare with the CPU;
// MX_GPU_TF32=1 allows them (math_settings.h).
// float16 and bfloat16: mixed precision's types (tensor cores; our own bias passes).
bool is_16bit_float(DType dtype) { return dtype == DType::kFloat16 || dtype == DType::kBFloat16; }

cudnnMathType_t math_for(DType dtype) {
  if (dtype == DType::kFloat32) return tf32_allowed() ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
  if (is_16bit_float(dtype)) return CUDNN_TENSOR_OP_MATH;
  return CUDNN_DEFAULT_MATH;
}

cudnnDataType_t compute_type(DType dtype) {
  return dtype == DType::kFloat64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
}

// alpha and beta of a cuDNN call: double for double data, float otherwise.
struct Scale {
  double d;
  float f;
  constexpr explicit Scale(double v) : d(v), f(static_cast<float>(v)) {}
  const void* ptr(DType dtype) const {
    return dtype == DType::kFloat64 ? static_cast<const void*>(&d) : static_cast<const void*>(&f);
  }
};

constexpr Scale kOne(1.0), kZero(0.0);

const void* beta_for(OpReq req, DType dtype) {
  return (req == OpReq::kAdd ? kOne : kZero).ptr(dtype);
}

// The descriptors of one convolution.
struct ConvDescs {
  TensorDesc x, y;
  FilterDesc w;
  ConvolutionDesc conv;

  ConvDescs(const CudnnConvShape& s, DType dtype, const char* op) : x(op), y(op), w(op), conv(op) {
    x.set_4d(dtype, s.x[0], s.x[1], s.x[2], s.x[3]);
    y.set_4d(dtype, s.y[0], s.y[1], s.y[2], s.y[3]);
    w.set_4d(dtype, s.w[0], s.w[1], s.w[2], s.w[3]);
    conv.set_2d(s.pad, s.stride, s.dilation, compute_type(dtype), s.groups, math_for(dtype));
  }
};

int64_t elements(const std::array<int64_t, 4>& dims) {
  return dims[0] * dims[1] * dims[2] * dims[3];
}

bool is_empty(const CudnnConvShape& s) {
  return elements(s.x) == 0 || elements(s.y) == 0 || elements(s.w) == 0;
}

template <typename Perf>
std::vector<AlgoCandidate> candidates_of(const Perf* perf, int count, DType dtype) {
  std::vector<AlgoCandidate> out;
  for (int i = 0; i < count; ++i) {
    AlgoCandidate c;
    c.algo = static_cast<int>(perf[i].algo);
    c.ok = perf[i].status == CUDNN_STATUS_SUCCESS &&
           (!deterministic_algorithms() || perf[i].determinism == CUDNN_DETERMINISTIC);
    c.math_ok = dtype != DType::kFloat32 || tf32_allowed() || perf[i].mathType == CUDNN_FMA_MATH;
    c.time_ms = perf[i].time;
    c.memory = perf[i].memory;
    out.push_back(c);
  }
  return out;
}

// The calls of one pass, so that choosing an algorithm is written once.
struct ForwardPass {
  using Perf = cudnnConvolutionFwdAlgoPerf_t;
  using Algo = cudnnConvolutionFwdAlgo_t;
  static int max_count(cudnnHandle_t h, const char* op) {
    int n = 0;
    MX_CUDA_CHECK(cudnnGetConvolutionForwardAlgorithmMaxCount(h, &n), op);
    return n;
  }
  static int heuristic(cudnnHandle_t h, const ConvDescs& d, int n, Perf* perf, const char* op) {
    int got = 0;
    MX_CUDA_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(h, d.x.get(), d.w.get(), d.conv.get(),
                                                         d.y.get(), n, &got, perf),
                  op);
    return got;
  }
  static cudnnStatus_t find(cudnnHandle_t h, const ConvDescs& d, int n, Perf* perf, int* got) {
    return cudnnFindConvolutionForwardAlgorithm(h, d.x.get(), d.w.get(), d.conv.get(), d.y.get(), n,
                                                got, perf);
  }
  static cudnnStatus_t workspace(cudnnHandle_t h, const ConvDescs& d, int algo, size_t* bytes) {
    return cudnnGetConvolutionForwardWorkspaceSize(h, d.x.get(), d.w.get(), d.conv.get(), d.y.get(),
                                                   static_cast<Algo>(algo), bytes);
  }
};

struct BackwardDataPass {
  using Perf = cudnnConvolutionBwdDataAlgoPerf_t;
  using Algo = cudnnConvolutionBwdDataAlgo_t;
  static int max_count(cudnnHandle_t h, const char* op) {
    int n = 0;
    MX_CUDA_CHECK(cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &n), op);
    return n;
  }
  static int heuristic(cudnnHandle_t h, const ConvDescs& d, int n, Perf* perf, const char* op) {
    int got = 0;
    MX_CUDA_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, d.w.get(), d.y.get(), d.conv.get(),
                                                              d.x.get(), n, &got, perf),
                  op);
    return got;
  }
  static cudnnStatus_t find(cudnnHandle_t h, const ConvDescs& d, int n, Perf* perf, int* got) {
    return cudnnFindConvolutionBackwardDataAlgorithm(h, d.w.get(), d.y.get(), d.conv.get(),
                                                     d.x.get(), n, got, perf);
  }
  static cudnnStatus_t workspace(cudnnHandle_t h, const ConvDescs& d, int algo, size_t* bytes) {
    return cudnnGetConvolutionBackwardDataWorkspaceSize(h, d.w.get(), d.y.get(), d.conv.get(),
                                                        d.x.get(), static_cast<Algo>(algo), bytes);
  }
};

struct BackwardFilterPass {
  using Perf = cudnnConvolutionBwdFilterAlgoPerf_t;
  using Algo = cudnnConvolutionBwdFilterAlgo_t;
  static int max_count(cudnnHandle_t h, const char* op) {
    int n = 0;
    MX_CUDA_CHECK(cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &n), op);
    return n;
  }
  static int heuristic(cudnnHandle_t h, const ConvDescs& d, int n, Perf* perf, const char* op) {
    int got = 0;
    MX_CUDA_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
                      h, d.x.get(), d.y.get(), d.conv.get(), d.w.get(), n, &got, perf),
                  op);
    return got;
  }
  static cudnnStatus_t find(cudnnHandle_t h, const ConvDescs& d, int n, Perf* perf, int* got) {
    return cudnnFindConvolutionBackwardFilterAlgorithm(h, d.x.get(), d.y.get(), d.conv.get(),
                                                       d.w.get(), n, got, perf);
  }
  static cudnnStatus_t workspace(cudnnHandle_t h, const ConvDescs& d, int algo, size_t* bytes) {
    return cudnnGetConvolutionBackwardFilterWorkspaceSize(
        h, d.x.get(), d.y.get(), d.conv.get(), d.w.get(), static_cast<Algo>(algo), bytes);
  }
};

const char* pass_name(ConvPass pass) {
  switch (pass) {
    case ConvPass::kForward: return "forward";
    case ConvPass::kBackwardData: return "data gradient";
    case ConvPass::kBackwardFilter: return "weight gradient";
  }
  return "?";
}

// Searches (or asks the heuristic) and returns the choice; no caching here.
// The graph API's plan for the pass, if it has one (cudnn_graph_conv.h).
std::shared_ptr<const GraphConvPlan> graph_plan(const CudnnConv& conv, ConvPass pass,
                                                const RunContext& rctx, cudnnHandle_t h,
                                                PassData data) {
  GraphConvRequest r;
  r.pass = pass;
  r.shape = cudnn_conv_shape(conv.geom, conv.op);
  r.dtype = conv.dtype;
  r.accumulate = data.accumulate;
  r.policy = conv.policy;
  r.workspace_limit = conv.workspace_limit;
  r.alignment = data.alignment;
  r.device = rctx.ctx.id;
  r.op = conv.op;
  return find_graph_conv_plan(r, h, static_cast<cudaStream_t>(rctx.stream));
}

template <typename Pass>
AlgoChoice search(const CudnnConv& conv, ConvPass pass, cudnnHandle_t h, const ConvDescs& d) {
  const int n = std::max(1, Pass::max_count(h, conv.op));
  std::vector<typename Pass::Perf> perf(static_cast<size_t>(n));
  int got = 0;
  bool measured = false;
  // Deterministic runs take the heuristic's order, which depends on the shapes only.
  const AlgoPolicy policy = deterministic_algorithms() ? AlgoPolicy::kHeuristic : conv.policy;
  if (policy != AlgoPolicy::kHeuristic) {
    // The measured search allocates its own buffers; where it cannot (the
    // memory pool holds the GPU's memory), cuDNN's heuristic order serves.
    const cudnnStatus_t status = Pass::find(h, d, n, perf.data(), &got);
    measured = status == CUDNN_STATUS_SUCCESS;
    if (!measured) {
      cudaGetLastError();  // a failed allocation inside cuDNN must not fail a later launch check
      MX_LOG(kWarning) << conv.op << ": cudnnFind for the " << pass_name(pass) << " pass failed ("
                       << cudnnGetErrorString(status) << "); using cuDNN's heuristic choice";
    }
  }
  if (!measured) got = Pass::heuristic(h, d, n, perf.data(), conv.op);
  std::vector<AlgoCandidate> candidates = candidates_of(perf.data(), got, conv.dtype);
  // The heuristic's memory estimate is not a measurement: ask for each size.
  if (!measured)
    for (AlgoCandidate& c : candidates)
      if (c.ok && Pass::workspace(h, d, c.algo, &c.memory) != CUDNN_STATUS_SUCCESS) c.ok = false;
  const std::optional<size_t> pick = pick_algo(candidates, policy, conv.workspace_limit);
  if (!pick)
    throw Error(str(conv.op, ": cuDNN has no algorithm for the ", pass_name(pass), " pass of ",
                    dtype_name(conv.dtype), " convolution ",
                    conv_algo_key(pass, cudnn_conv_shape(conv.geom, conv.op), conv.dtype,
                                  conv.policy, conv.workspace_limit, 0)));
  AlgoChoice choice;
  const size_t i = *pick;
  choice.algo = candidates[i].algo;
  choice.math = perf[i].mathType;
  size_t bytes = 0;
  MX_CUDA_CHECK(Pass::workspace(h, d, choice.algo, &bytes), conv.op);
  choice.workspace = std::max(bytes, candidates[i].memory);
  if (measured) choice.time_ms = candidates[i].time_ms;
  // MX_LOG_LEVEL=debug lists every choice, to compare with a profiler's view.
  MX_LOG(kDebug) << conv.op << ": cuDNN " << pass_name(pass) << " algorithm " << choice.algo
                 << (measured ? str(" (", candidates[i].time_ms, " ms measured)") : " (heuristic)")
                 << " of " << got << ", math " << static_cast<int>(choice.math) << ", workspace "
                 << choice.workspace << " B, for "
                 << conv_algo_key(pass, cudnn_conv_shape(conv.geom, conv.op), conv.dtype,
                                  conv.policy, conv.workspace_limit, 0);
  return choice;
}

// The cached choice for `pass`, searched on first use.
AlgoChoice choose(const CudnnConv& conv, ConvPass pass, const RunContext& rctx, cudnnHandle_t h,
                  PassData data) {
  const std::string key = conv_algo_key(pass, cudnn_conv_shape(conv.geom, conv.op), conv.dtype,
                                        conv.policy, conv.workspace_limit, rctx.ctx.id) +
                          str(" beta=", data.accumulate ? 1 : 0, " align=", data.alignment);
  AlgoCache& cache = algo_cache();
  {
    std::lock_guard lock(cache.mutex);
    auto it = cache.by_key.find(key);
    if (it != cache.by_key.end()) return it->second;
  }
  // Searched without the lock (a search runs kernels); two threads that
  // search the same key at once store equivalent choices.
  const ConvDescs d(cudnn_conv_shape(conv.geom, conv.op), conv.dtype, conv.op);
  AlgoChoice choice;
  switch (pass) {
    case ConvPass::kForward: choice = search<ForwardPass>(conv, pass, h, d); break;
    case ConvPass::kBackwardData: choice = search<BackwardDataPass>(conv, pass, h, d); break;
    case ConvPass::kBackwardFilter: choice = search<BackwardFilterPass>(conv, pass, h, d); break;
  }
  // The graph API's engines compete with the legacy choice on measured time
  // (neither wins everywhere: docs/gpu.md). Choices made from the shapes
  // alone (MX_GPU_DETERMINISTIC=1, cudnn_tune 'off') stay with the legacy API.
  if (choice.time_ms >= 0 && !deterministic_algorithms() && conv.policy != AlgoPolicy::kHeuristic) {
    if (auto plan = graph_plan(conv, pass, rctx, h, data);
        plan && plan->measured_ms() < choice.time_ms) {
      choice.plan = std::move(plan);
      choice.workspace = choice.plan->workspace();
    }
  }
  std::lock_guard lock(cache.mutex);
  return cache.by_key.emplace(key, choice).first->second;
}

// The output of a pass whose tensors are empty: nothing to add, zeros to write.
void write_zero_contribution(void* out, int64_t count, DType dtype, OpReq req,
                             const RunContext& rctx, const char* op) {
  if (count <= 0 || req == OpReq::kNull || req == OpReq::kAdd) return;
  MX_CUDA_CHECK(cudaMemsetAsync(out, 0, static_cast<size_t>(count) * dtype_size(dtype),
                                static_cast<cudaStream_t>(rctx.stream)),
                op);
}

// The pieces every pass sets up: shape, handle, descriptors, algorithm, workspace.
struct PassSetup {
  CudnnConvShape shape;
  cudnnHandle_t handle;
  std::unique_ptr<ConvDescs> descs;
  AlgoChoice choice;
  void* workspace = nullptr;

  PassSetup(const CudnnConv& conv, ConvPass pass, const RunContext& rctx, const OpResources& res,
            PassData data)
      : shape(cudnn_conv_shape(conv.geom, conv.op)), handle(cudnn_handle(rctx)) {
    choice = choose(conv, pass, rctx, handle, data);
    if (!choice.plan) {  // the legacy API's descriptors
      descs = std::make_unique<ConvDescs>(shape, conv.dtype, conv.op);
      // Run with the math type cuDNN measured the algorithm with.
      MX_CUDA_CHECK(cudnnSetConvolutionMathType(descs->conv.get(), choice.math), conv.op);
    }
    if (choice.workspace > 0) workspace = res.temp_space(choice.workspace);
  }
};

}  // namespace

void cudnn_conv_forward(const CudnnConv& conv, const RunContext& rctx, const OpResources& res,
                        const void* x, const void* w, void* y, OpReq req) {
  if (req == OpReq::kNull) return;
  const CudnnConvShape shape = cudnn_conv_shape(conv.geom, conv.op);
  if (is_empty(shape))
    return write_zero_contribution(y, elements(shape.y), conv.dtype, req, rctx, conv.op);
  const PassSetup s(conv, ConvPass::kForward, rctx, res,
                    {req == OpReq::kAdd, alignment_of({x, w, y})});
  if (s.choice.plan)
    return MX_CUDA_CHECK(s.choice.plan->execute(s.handle, x, w, y, s.workspace), conv.op);
  const ConvDescs& d = *s.descs;
  MX_CUDA_CHECK(cudnnConvolutionForward(
                    s.handle, kOne.ptr(conv.dtype), d.x.get(), x, d.w.get(), w, d.conv.get(),
                    static_cast<cudnnConvolutionFwdAlgo_t>(s.choice.algo), s.workspace,
                    s.choice.workspace, beta_for(req, conv.dtype), d.y.get(), y),
                conv.op);
}

void cudnn_conv_backward_data(const CudnnConv& conv, const RunContext& rctx, const OpResources& res,
                              const void* dy, const void* w, void* dx, OpReq req) {
  if (req == OpReq::kNull) return;
  const CudnnConvShape shape = cudnn_conv_shape(conv.geom, conv.op);
  if (is_empty(shape))
    return write_zero_contribution(dx, elements(shape.x), conv.dtype, req, rctx, conv.op);
  const PassSetup s(conv, ConvPass::kBackwardData, rctx, res,
                    {req == OpReq::kAdd, alignment_of({dy, w, dx})});
  if (s.choice.plan)
    return MX_CUDA_CHECK(s.choice.plan->execute(s.handle, dx, w, dy, s.workspace), conv.op);
  const ConvDescs& d = *s.descs;
  MX_CUDA_CHECK(cudnnConvolutionBackwardData(
                    s.handle, kOne.ptr(conv.dtype), d.w.get(), w, d.y.get(), dy, d.conv.get(),
                    static_cast<cudnnConvolutionBwdDataAlgo_t>(s.choice.algo), s.workspace,
                    s.choice.workspace, beta_for(req, conv.dtype), d.x.get(), dx),
                conv.op);
}

void cudnn_conv_backward_filter(const CudnnConv& conv, const RunContext& rctx,
                                const OpResources& res, const void* x, const void* dy, void* dw,
                                OpReq req) {
  if (req == OpReq::kNull) return;
  const CudnnConvShape shape = cudnn_conv_shape(conv.geom, conv.op);
  if (is_empty(shape))
    return write_zero_contribution(dw, elements(shape.w), conv.dtype, req, rctx, conv.op);
  const PassSetup s(conv, ConvPass::kBackwardFilter, rctx, res,
                    {req == OpReq::kAdd, alignment_of({x, dy, dw})});
  if (s.choice.plan)
    return MX_CUDA_CHECK(s.choice.plan->execute(s.handle, x, dw, dy, s.workspace), conv.op);
  const ConvDescs& d = *s.descs;
  MX_CUDA_CHECK(cudnnConvolutionBackwardFilter(
                    s.handle, kOne.ptr(conv.dtype), d.x.get(), x, d.y.get(), dy, d.conv.get(),
                    static_cast<cudnnConvolutionBwdFilterAlgo_t>(s.choice.algo), s.workspace,
                    s.choice.workspace, beta_for(req, conv.dtype), d.w.get(), dw),
                conv.op);
}

void cudnn_conv_reserve(const CudnnConv& conv, std::initializer_list<ConvPass> passes,
                        const RunContext& rctx, const OpResources& res) {
  const CudnnConvShape shape = cudnn_conv_shape(conv.geom, conv.op);
  if (is_empty(shape)) return;
  const cudnnHandle_t handle = cudnn_handle(rctx);
  size_t bytes = 0;
  for (ConvPass pass : passes)
    bytes = std::max(bytes, choose(conv, pass, rctx, handle, PassData{}).workspace);
  if (bytes > 0) res.temp_space(bytes);
}

void cudnn_add_bias(const char* op, DType dtype, const RunContext& rctx, const void* bias, void* y,
                    int64_t batch, int64_t channels, int64_t plane) {
  if (batch * channels * plane == 0) return;
  if (is_16bit_float(dtype))
    return channel_bias_add_gpu(op, dtype, rctx, bias, y, batch, channels, plane);
  TensorDesc bias_desc(op), y_desc(op);
  bias_desc.set_4d(dtype, 1, channels, 1, 1);
  y_desc.set_4d(dtype, batch, channels, 1, plane);
  MX_CUDA_CHECK(cudnnAddTensor(cudnn_handle(rctx), kOne.ptr(dtype), bias_desc.get(), bias,
                               kOne.ptr(dtype), y_desc.get(), y),
                op);
}

void cudnn_bias_gradient(const char* op, DType dtype, const RunContext& rctx, const void* dy,
                         int64_t batch, int64_t channels, int64_t plane, void* db, OpReq req) {
  if (req == OpReq::kNull || channels == 0) return;
  if (batch * plane == 0) return write_zero_contribution(db, channels, dtype, req, rctx, op);
  if (is_16bit_float(dtype))
    return channel_bias_grad_gpu(op, dtype, rctx, dy, batch, channels, plane, db, req);
  TensorDesc dy_desc(op), db_desc(op);
  dy_desc.set_4d(dtype, batch, channels, 1, plane);
  db_desc.set_4d(dtype, 1, channels, 1, 1);
  MX_CUDA_CHECK(cudnnConvolutionBackwardBias(cudnn_handle(rctx), kOne.ptr(dtype), dy_desc.get(), dy,
                                             beta_for(req, dtype), db_desc.get(), db),
                op);
}

}  // namespace mx::op::cuda

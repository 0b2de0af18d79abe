#include "op/cuda/cudnn_graph_conv.h"

#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/logging.h"
#include "base/strings.h"
#include "op/cuda/cuda_check.h"
#include "op/cuda/cudnn_descriptors.h"
#include "op/cuda/math_settings.h"
#include "storage/storage.h"

namespace mx::op::cuda {
namespace {

// Unique ids of the three tensors in every pass's graph and variant pack.
constexpr int64_t kX = 1, kW = 2, kY = 3;
constexpr int kTimedRuns = 3;

// Owns one backend descriptor.
class Desc {
 public:
  explicit Desc(cudnnBackendDescriptorType_t type) {
    MX_CUDA_CHECK(cudnnBackendCreateDescriptor(type, &desc_), "cuDNN graph");
  }
  ~Desc() {
    if (desc_ != nullptr) cudnnBackendDestroyDescriptor(desc_);
  }
  Desc(Desc&& o) noexcept : desc_(std::exchange(o.desc_, nullptr)) {}
  Desc& operator=(Desc&& o) noexcept {
    if (this != &o) {
      if (desc_ != nullptr) cudnnBackendDestroyDescriptor(desc_);
      desc_ = std::exchange(o.desc_, nullptr);
    }
    return *this;
  }
  Desc(const Desc&) = delete;
  Desc& operator=(const Desc&) = delete;

  cudnnBackendDescriptor_t get() const { return desc_; }
  cudnnBackendDescriptor_t release() { return std::exchange(desc_, nullptr); }

  template <typename T>
  void set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, const T* values,
           int64_t count = 1) {
    MX_CUDA_CHECK(cudnnBackendSetAttribute(desc_, name, type, count, values), "cuDNN graph");
  }
  void set_desc(cudnnBackendAttributeName_t name, const Desc& value) {
    cudnnBackendDescriptor_t d = value.get();
    set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, &d);
  }
  cudnnStatus_t try_finalize() { return cudnnBackendFinalize(desc_); }
  void finalize() { MX_CUDA_CHECK(try_finalize(), "cuDNN graph"); }

 private:
  cudnnBackendDescriptor_t desc_ = nullptr;
};

Desc tensor(int64_t uid, const std::array<int64_t, 4>& dims, cudnnDataType_t type,
            int64_t alignment) {
  const std::array<int64_t, 4> strides = {dims[1] * dims[2] * dims[3], dims[2] * dims[3], dims[3],
                                          1};
  Desc t(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, &type);
  t.set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, dims.data(), 4);
  t.set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, strides.data(), 4);
  t.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, &uid);
  t.set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, &alignment);
  t.finalize();
  return t;
}

Desc convolution(const CudnnConvShape& s) {
  const int64_t spatial = 2;
  const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  const std::array<int64_t, 2> pad = {s.pad[0], s.pad[1]}, stride = {s.stride[0], s.stride[1]},
                               dilation = {s.dilation[0], s.dilation[1]};
  Desc c(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  c.set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, &spatial);
  c.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &compute);
  c.set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, &mode);
  c.set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, pad.data(), 2);
  c.set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, pad.data(), 2);
  c.set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, stride.data(), 2);
  c.set(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, dilation.data(), 2);
  c.finalize();
  return c;
}

// The attribute names of one pass's operation: (x, w, y, conv, alpha, beta).
struct PassAttrs {
  cudnnBackendDescriptorType_t type;
  cudnnBackendAttributeName_t x, w, y, conv, alpha, beta;
};

PassAttrs attrs_of(ConvPass pass) {
  switch (pass) {
    case ConvPass::kForward:
      return {CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA};
    case ConvPass::kBackwardData:
      return {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA};
    case ConvPass::kBackwardFilter: break;
  }
  return {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
          CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
          CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
          CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY,
          CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC,
          CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA,
          CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA};
}

// The finalized operation graph of one pass.
Desc operation_graph(const GraphConvRequest& r, cudnnHandle_t handle) {
  const cudnnDataType_t type = cudnn_data_type(r.dtype, "Convolution");
  const Desc x = tensor(kX, r.shape.x, type, r.alignment);
  const Desc w = tensor(kW, r.shape.w, type, r.alignment);
  const Desc y = tensor(kY, r.shape.y, type, r.alignment);
  const Desc conv = convolution(r.shape);
  const PassAttrs a = attrs_of(r.pass);
  const float alpha = 1.0f, beta = r.accumulate ? 1.0f : 0.0f;
  Desc op(a.type);
  op.set_desc(a.x, x);
  op.set_desc(a.w, w);
  op.set_desc(a.y, y);
  op.set_desc(a.conv, conv);
  op.set(a.alpha, CUDNN_TYPE_FLOAT, &alpha);
  op.set(a.beta, CUDNN_TYPE_FLOAT, &beta);
  op.finalize();
  Desc graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  graph.set_desc(CUDNN_ATTR_OPERATIONGRAPH_OPS, op);
  graph.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, &handle);
  graph.finalize();
  return graph;
}

// The engine configurations cuDNN's heuristics (`mode`) suggest, best first.
std::vector<Desc> engine_configs(const Desc& graph, cudnnBackendHeurMode_t mode) {
  Desc heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  heur.set_desc(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph);
  heur.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, &mode);
  if (heur.try_finalize() != CUDNN_STATUS_SUCCESS) return {};
  int64_t count = 0;
  if (cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                               nullptr) != CUDNN_STATUS_SUCCESS)
    return {};
  std::vector<Desc> configs;
  std::vector<cudnnBackendDescriptor_t> handles;
  for (int64_t i = 0; i < count; ++i) {
    configs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    handles.push_back(configs.back().get());
  }
  int64_t got = 0;
  if (count == 0 || cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                             CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got,
                                             handles.data()) != CUDNN_STATUS_SUCCESS)
    return {};
  configs.erase(configs.begin() + std::min(got, count), configs.end());
  return configs;
}

// The engine of a configuration, nullopt where cuDNN gives none.
std::optional<Desc> engine_of(const Desc& config) {
  Desc engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  cudnnBackendDescriptor_t e = engine.get();
  int64_t n = 0;
  if (cudnnBackendGetAttribute(config.get(), CUDNN_ATTR_ENGINECFG_ENGINE,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &e) != CUDNN_STATUS_SUCCESS)
    return std::nullopt;
  return std::optional<Desc>(std::move(engine));
}

// The global index of an engine, -1 where there is none or cuDNN does not say.
int64_t index_of(const std::optional<Desc>& engine) {
  int64_t n = 0, index = -1;
  if (!engine || cudnnBackendGetAttribute(engine->get(), CUDNN_ATTR_ENGINE_GLOBAL_INDEX,
                                          CUDNN_TYPE_INT64, 1, &n, &index) != CUDNN_STATUS_SUCCESS)
    return -1;
  return index;
}

int64_t engine_index(const Desc& config) { return index_of(engine_of(config)); }

// Why an engine does not compute as mx promises for this request, or
// nullptr where it does: float32 on full-precision FMA (TF32 only under
// MX_GPU_TF32=1, never down-converted inputs), sums never in reduced
// precision (float16 and bfloat16 sum in float32), no
// kernel compiled at run time (seconds at the first batch). Deterministic
// runs never get here: their choice is the legacy API's
// (cudnn_convolution.cc). Sets `index` to the engine's global index.
const char* engine_refusal(const Desc& config, const GraphConvRequest& r, int64_t& index) {
  const std::optional<Desc> engine = engine_of(config);
  index = index_of(engine);
  if (!engine) return "no engine";
  cudnnBackendDescriptor_t e = engine->get();
  std::array<cudnnBackendNumericalNote_t, CUDNN_NUMERICAL_NOTE_TYPE_COUNT> notes{};
  int64_t note_count = 0;
  if (cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                               static_cast<int64_t>(notes.size()), &note_count,
                               notes.data()) != CUDNN_STATUS_SUCCESS)
    return "no notes";
  const bool float32 = r.dtype == DType::kFloat32;
  for (int64_t i = 0; i < note_count; ++i) {
    const cudnnBackendNumericalNote_t note = notes[static_cast<size_t>(i)];
    if (float32 && note == CUDNN_NUMERICAL_NOTE_TENSOR_CORE && !tf32_allowed()) return "tf32";
    if (float32 && note == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS) return "down-convert";
    // Mixed precision promises float32 sums too (MXNet's and PyTorch's AMP).
    if (note == CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION) return "reduced-precision sum";
  }
  std::array<cudnnBackendBehaviorNote_t, CUDNN_BEHAVIOR_NOTE_TYPE_COUNT> behaviours{};
  int64_t behaviour_count = 0;
  if (cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE,
                               static_cast<int64_t>(behaviours.size()), &behaviour_count,
                               behaviours.data()) == CUDNN_STATUS_SUCCESS)
    for (int64_t i = 0; i < behaviour_count; ++i)
      if (behaviours[static_cast<size_t>(i)] == CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION)
        return "compiled at run time";
  return nullptr;
}

// The heuristics' configurations, then those of cuDNN's fallback list whose
// engines the heuristics did not offer (as PyTorch's benchmark mode takes both).
std::vector<Desc> all_configs(const Desc& graph) {
  std::vector<Desc> configs = engine_configs(graph, CUDNN_HEUR_MODE_A);
  std::vector<int64_t> seen;
  for (const Desc& c : configs) seen.push_back(engine_index(c));
  for (Desc& c : engine_configs(graph, CUDNN_HEUR_MODE_FALLBACK)) {
    const int64_t index = engine_index(c);
    if (index >= 0 && std::find(seen.begin(), seen.end(), index) != seen.end()) continue;
    seen.push_back(index);
    configs.push_back(std::move(c));
  }
  return configs;
}

// The finalized plans of the allowed configurations, heuristic order, at most
// MX_CUDNN_BENCHMARK_LIMIT of them; MX_LOG_LEVEL=debug lists the refused ones.
std::vector<std::shared_ptr<GraphConvPlan>> candidate_plans(const GraphConvRequest& r,
                                                            cudnnHandle_t handle) {
  const Desc graph = operation_graph(r, handle);
  const std::vector<Desc> configs = all_configs(graph);
  const auto limit = static_cast<size_t>(cudnn_benchmark_limit());
  std::vector<std::shared_ptr<GraphConvPlan>> plans;
  std::string refused;
  for (const Desc& config : configs) {
    if (plans.size() >= limit) break;
    int64_t engine = -1;
    if (const char* why = engine_refusal(config, r, engine)) {
      refused += str(refused.empty() ? "" : ", ", engine, " (", why, ")");
      continue;
    }
    Desc plan(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    plan.set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, &handle);
    plan.set_desc(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, config);
    if (plan.try_finalize() != CUDNN_STATUS_SUCCESS) continue;
    int64_t workspace = 0, n = 0;
    if (cudnnBackendGetAttribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                 CUDNN_TYPE_INT64, 1, &n, &workspace) != CUDNN_STATUS_SUCCESS ||
        workspace < 0)
      continue;
    plans.push_back(
        std::make_shared<GraphConvPlan>(plan.release(), static_cast<size_t>(workspace), engine));
  }
  if (!refused.empty()) {
    MX_LOG(kDebug) << r.op << ": cuDNN graph engines refused of " << configs.size() << ": "
                   << refused;
  }
  return plans;
}

size_t bytes_of(const std::array<int64_t, 4>& dims, DType dtype) {
  return static_cast<size_t>(dims[0] * dims[1] * dims[2] * dims[3]) * dtype_size(dtype);
}

// Milliseconds per run of `plan` on zeroed scratch tensors; nullopt when it
// fails to run.
std::optional<float> time_plan(const GraphConvPlan& plan, cudnnHandle_t handle, cudaStream_t stream,
                               const std::array<void*, 3>& tensors, void* workspace) {
  if (plan.execute(handle, tensors[0], tensors[1], tensors[2], workspace) != CUDNN_STATUS_SUCCESS)
    return std::nullopt;  // the warm-up run
  cudaEvent_t start = nullptr, stop = nullptr;
  MX_CUDA_CHECK(cudaEventCreate(&start), "cuDNN graph");
  MX_CUDA_CHECK(cudaEventCreate(&stop), "cuDNN graph");
  bool ok = cudaEventRecord(start, stream) == cudaSuccess;
  for (int i = 0; ok && i < kTimedRuns; ++i)
    ok =
        plan.execute(handle, tensors[0], tensors[1], tensors[2], workspace) == CUDNN_STATUS_SUCCESS;
  float ms = 0;
  ok = ok && cudaEventRecord(stop, stream) == cudaSuccess &&
       cudaEventSynchronize(stop) == cudaSuccess &&
       cudaEventElapsedTime(&ms, start, stop) == cudaSuccess;
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  if (!ok) return std::nullopt;
  return ms / kTimedRuns;
}

// The fastest plan within the workspace limit (any size under kFastest),
// measured; nullptr when none fits or none runs.
std::shared_ptr<GraphConvPlan> fastest(const GraphConvRequest& r,
                                       const std::vector<std::shared_ptr<GraphConvPlan>>& plans,
                                       cudnnHandle_t handle, cudaStream_t stream) {
  size_t workspace = 0;
  for (const auto& p : plans)
    if (r.policy == AlgoPolicy::kFastest || p->workspace() <= r.workspace_limit)
      workspace = std::max(workspace, p->workspace());
  const Context ctx = Context::gpu(r.device);
  const Storage x = allocate_storage(ctx, bytes_of(r.shape.x, r.dtype), "cuDNN search");
  const Storage w = allocate_storage(ctx, bytes_of(r.shape.w, r.dtype), "cuDNN search");
  const Storage y = allocate_storage(ctx, bytes_of(r.shape.y, r.dtype), "cuDNN search");
  const Storage ws = allocate_storage(ctx, std::max<size_t>(workspace, 1), "cuDNN search");
  for (const Storage* s : {&x, &w, &y})
    MX_CUDA_CHECK(cudaMemsetAsync(s->data(), 0, s->size(), stream), r.op);
  std::shared_ptr<GraphConvPlan> best;
  float best_ms = std::numeric_limits<float>::max();
  std::string timings;  // engine:ms of every candidate, for MX_LOG_LEVEL=debug
  for (const auto& p : plans) {
    if (p->workspace() > workspace) continue;
    const std::optional<float> ms =
        time_plan(*p, handle, stream, {x.data(), w.data(), y.data()}, ws.data());
    timings +=
        str(timings.empty() ? "" : ", ", p->engine(), ":", ms ? str(*ms) : std::string("failed"));
    if (ms && *ms < best_ms) {
      best_ms = *ms;
      best = p;
    }
  }
  if (best) best->set_measured_ms(best_ms);
  cudaGetLastError();  // a candidate that failed must not fail a later launch check
  // The scratch buffers go back to the pool: nothing queued may still use them.
  MX_CUDA_CHECK(cudaStreamSynchronize(stream), r.op);
  if (best) {
    MX_LOG(kDebug) << r.op << ": cuDNN graph engine " << best->engine() << " (" << best_ms
                   << " ms measured) of " << plans.size() << ", workspace " << best->workspace()
                   << " B; engine:ms " << timings;
  }
  return best;
}

// The passes the graph API is tried for: float32, float16 and bfloat16, ungrouped.
bool graph_conv_eligible(const GraphConvRequest& r) {
  return (r.dtype == DType::kFloat32 || r.dtype == DType::kFloat16 ||
          r.dtype == DType::kBFloat16) &&
         r.shape.groups == 1;
}

}  // namespace

GraphConvPlan::GraphConvPlan(cudnnBackendDescriptor_t plan, size_t workspace, int64_t engine)
    : plan_(plan), workspace_(workspace), engine_(engine) {}

GraphConvPlan::~GraphConvPlan() {
  if (plan_ != nullptr) cudnnBackendDestroyDescriptor(plan_);
}

cudnnStatus_t GraphConvPlan::execute(cudnnHandle_t handle, const void* x, const void* w,
                                     const void* y, void* workspace) const {
  std::array<void*, 3> pointers = {const_cast<void*>(x), const_cast<void*>(w),
                                   const_cast<void*>(y)};
  const std::array<int64_t, 3> uids = {kX, kW, kY};
  cudnnBackendDescriptor_t pack = nullptr;
  cudnnStatus_t status = cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack);
  if (status != CUDNN_STATUS_SUCCESS) return status;
  status = cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                    CUDNN_TYPE_VOID_PTR, 3, pointers.data());
  if (status == CUDNN_STATUS_SUCCESS)
    status = cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3,
                                      uids.data());
  if (status == CUDNN_STATUS_SUCCESS)
    status = cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR,
                                      1, &workspace);
  if (status == CUDNN_STATUS_SUCCESS) status = cudnnBackendFinalize(pack);
  if (status == CUDNN_STATUS_SUCCESS) status = cudnnBackendExecute(handle, plan_, pack);
  cudnnBackendDestroyDescriptor(pack);
  return status;
}

std::shared_ptr<const GraphConvPlan> find_graph_conv_plan(const GraphConvRequest& r,
                                                          cudnnHandle_t handle,
                                                          cudaStream_t stream) {
  if (!graph_conv_eligible(r)) return nullptr;
  try {
    const std::vector<std::shared_ptr<GraphConvPlan>> plans = candidate_plans(r, handle);
    return plans.empty() ? nullptr : fastest(r, plans, handle, stream);
  } catch (const Error& e) {  // no graph, or no memory to measure on: the legacy API serves
    cudaGetLastError();
    MX_LOG(kDebug) << r.op << ": cuDNN graph API not used for this pass: " << e.what();
    return nullptr;
  }
}

}  // namespace mx::op::cuda

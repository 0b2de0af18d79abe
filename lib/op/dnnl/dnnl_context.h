// What every oneDNN kernel of mx shares: the CPU engine, the thread count of
// a primitive call, a cache of primitives keyed by operator, shapes and
// parameters, and DnnlStep, a primitive bound to mx's plain (row-major)
// buffers that reorders to and from the formats the primitive chose.
//
// Primitives are created with format `any` so oneDNN picks its fastest
// (blocked) layouts; each step holds the reorders its layouts need, created
// once with it. Temporary buffers (reordered tensors, the scratchpad in
// user mode, outputs that are added to) come from the operator's TempSpace
// when it has one, else from a per-thread buffer.
#pragma once

#include <dnnl.hpp>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "op/resources.h"
#include "op/tensor_ref.h"

namespace mx::op::dnnl_impl {

using dims = dnnl::memory::dims;
using tag = dnnl::memory::format_tag;

const dnnl::engine& cpu_engine();

// OpenMP threads of one primitive call: MX_DNNL_THREADS when set, else the
// thread budget. The engine's workers rarely run two large kernels at once
// in LeNet or ResNet (their layers form a chain), and one thread per worker
// (budget / workers) was slower in every measurement (docs/benchmarks.md).
int dnnl_threads();

// oneDNN's data type of float32 and bfloat16 arrays (the types its training
// kernels take here).
dnnl::memory::data_type dnnl_type(DType dtype);

// A plain memory descriptor, float32 unless told.
dnnl::memory::desc plain(const dims& shape, tag format,
                         dnnl::memory::data_type dt = dnnl::memory::data_type::f32);
inline dnnl::memory::desc any(const dims& shape,
                              dnnl::memory::data_type dt = dnnl::memory::data_type::f32) {
  return dnnl::memory::desc(shape, dt, tag::any);
}

// Primitive attributes shared by every step: user-managed scratchpad.
dnnl::primitive_attr scratch_attr();

// One argument of a step: what the caller passes (plain layout `user`) and
// what the primitive takes (`want`).
struct StepArg {
  int arg = 0;
  bool output = false;
  dnnl::memory::desc user, want;
  std::optional<dnnl::reorder> to_want, to_user;
};

// A primitive with its arguments, made once per shape.
struct DnnlStep {
  dnnl::primitive primitive;
  std::vector<StepArg> args;
  dnnl::memory::desc scratchpad;
};

// Builds a step: `args` are (DNNL_ARG_*, plain layout, is output).
struct ArgSpec {
  int arg;
  dnnl::memory::desc user;
  bool output = false;
};
DnnlStep make_step(dnnl::primitive primitive, const dnnl::primitive_desc_base& pd,
                   const std::vector<ArgSpec>& args);

// Names one content of an input array: its engine variable's uid and
// version (TensorRef::var). Inputs that carry one and need a reorder are
// reordered once per content and kept (weights in inference, where they
// never change), instead of once per call.
struct ContentStamp {
  uint64_t var_uid = 0;
  uint64_t version = 0;
  bool operator==(const ContentStamp& o) const {
    return var_uid == o.var_uid && version == o.version;
  }
};
// The stamp of `t`, when its variable is known.
std::optional<ContentStamp> content_stamp(const TensorRef& t);
// How many stamped inputs were reordered into the cache so far (tests check
// that a second call with the same content reorders nothing).
uint64_t stamped_reorders_made();

// Runs a step on buffers given in the order of its arguments; `req` is per
// argument (read only for outputs: kWrite/kInplace overwrite, kAdd adds,
// kNull computes into scratch and drops the result). `stamps`, when given,
// is per argument (see ContentStamp; ignored for outputs).
void run(const DnnlStep& step, const std::vector<const void*>& buffers,
         const std::vector<OpReq>& req, const OpResources& resources,
         const std::vector<std::optional<ContentStamp>>& stamps = {});

// The step cached under `key`, made by `make` on the first request.
std::shared_ptr<const DnnlStep> cached_step(const std::string& key,
                                            const std::function<DnnlStep()>& make);

// Key parts joined by ','.
template <typename... Parts>
std::string make_key(const Parts&... parts) {
  std::string key;
  auto add = [&](const auto& part) {
    if constexpr (std::is_convertible_v<decltype(part), std::string>)
      key += part;
    else
      key += std::to_string(part);
    key += ',';
  };
  (add(parts), ...);
  return key;
}

}  // namespace mx::op::dnnl_impl

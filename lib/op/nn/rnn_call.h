// One call of the RNN operator on a device: its arrays, requests and
// temporary memory turned into rnn_driver.h's terms. The CPU kernels
// (rnn.cc) and the CUDA kernels (cuda/rnn_gpu.cu) differ only in `Ops`.
#pragma once

#include <type_traits>
#include <vector>

#include "base/error.h"
#include "op/nn/rnn_driver.h"
#include "op/op_def.h"

namespace mx::op::rnn {

// Temporary memory of a call: the lengths as int32, then T scratch.
template <typename T>
struct CallScratch {
  int32_t* lengths = nullptr;
  T* values = nullptr;
};

template <typename T>
CallScratch<T> take_scratch(const RnnParam& p, const RnnGeometry& g, const OpResources& res,
                            int64_t values) {
  const int64_t length_slots = p.use_sequence_length ? (g.N + 15) / 16 * 16 : 0;
  auto* base =
      static_cast<char*>(res.temp_space(static_cast<size_t>(length_slots) * sizeof(int32_t) +
                                        static_cast<size_t>(values) * sizeof(T)));
  CallScratch<T> s;
  if (length_slots > 0) s.lengths = reinterpret_cast<int32_t*>(base);
  s.values = reinterpret_cast<T*>(base + length_slots * static_cast<int64_t>(sizeof(int32_t)));
  return s;
}

template <typename T, typename Ops>
void convert_lengths(Ops& ops, const TensorRef& lengths, int32_t* out, int64_t steps) {
  dispatch_dtype(lengths.dtype, [&](auto tag) {
    using L = typename decltype(tag)::type;
    if constexpr (is_half_like_v<L>)
      throw InputError("RNN: float16 and bfloat16 sequence lengths are not supported");
    else
      ops.grid(1, lengths.size(), ToLengths<L>{lengths.ptr<L>(), out, steps});
  });
}

template <typename T>
Arrays<T> call_arrays(const RnnParam& p, const std::vector<TensorRef>& inputs,
                      const TensorRef& workspace, const int32_t* lengths) {
  return {inputs[0].ptr<T>(),
          inputs[1].ptr<T>(),
          inputs[2].ptr<T>(),
          p.lstm() ? inputs[3].ptr<T>() : nullptr,
          lengths,
          workspace.ptr<T>()};
}

inline RnnGeometry geometry_of(const RnnParam& p, const Shape& data) {
  return RnnGeometry(p, data[0], data[1], data[2]);
}

template <typename T, typename Ops>
void run_forward(const RnnParam& p, const ForwardCall& c, Ops& ops) {
  const RnnGeometry g = geometry_of(p, c.inputs[0].shape);
  Driver<T, Ops> driver(p, g, ops, c.is_train);
  CallScratch<T> s = take_scratch<T>(p, g, c.resources, driver.forward_scratch());
  if (s.lengths != nullptr) convert_lengths<T>(ops, c.inputs.back(), s.lengths, g.T);
  ForwardOutputs<T> o{};
  auto target = [&](size_t i, T*& ptr, bool& add) {
    if (c.req[i] == OpReq::kNull) return;
    ptr = c.outputs[i].ptr<T>();
    add = c.req[i] == OpReq::kAdd;
  };
  target(0, o.out, o.out_add);
  if (p.state_outputs) {
    target(1, o.hy, o.hy_add);
    if (p.lstm()) target(2, o.cy, o.cy_add);
  }
  driver.forward(call_arrays<T>(p, c.inputs, c.outputs.back(), s.lengths), o, s.values);
}

template <typename T, typename Ops>
void run_backward(const RnnParam& p, const BackwardCall& c, Ops& ops) {
  const RnnGeometry g = geometry_of(p, c.inputs[0].shape);
  Driver<T, Ops> driver(p, g, ops, c.is_train);
  CallScratch<T> s = take_scratch<T>(p, g, c.resources, driver.backward_scratch());
  if (s.lengths != nullptr) convert_lengths<T>(ops, c.inputs.back(), s.lengths, g.T);
  BackwardGrads<T> b{};
  b.dout = c.out_grads[0].ptr<T>();
  if (p.state_outputs) {
    b.dhy = c.out_grads[1].ptr<T>();
    if (p.lstm()) b.dcy = c.out_grads[2].ptr<T>();
  }
  auto wanted = [&](size_t i, T*& ptr, bool& add) {
    if (c.req[i] == OpReq::kNull) return;
    ptr = c.in_grads[i].ptr<T>();
    add = c.req[i] == OpReq::kAdd;
  };
  wanted(0, b.ddata, b.ddata_add);
  bool params_add = false;
  wanted(1, b.dparams, params_add);
  // The weight gradients accumulate over directions and steps.
  if (b.dparams != nullptr && !params_add)
    ops.grid(1, c.in_grads[1].size(), Fill<T>{b.dparams, c.in_grads[1].size(), T(0)});
  wanted(2, b.dhx, b.dhx_add);
  if (p.lstm()) wanted(3, b.dcx, b.dcx_add);
  // The lengths have no gradient.
  if (p.use_sequence_length) {
    const TensorRef& dlengths = c.in_grads.back();
    if (c.req.back() == OpReq::kWrite || c.req.back() == OpReq::kInplace)
      dispatch_dtype(dlengths.dtype, [&](auto tag) {
        using L = typename decltype(tag)::type;
        if constexpr (!is_half_like_v<L>)  // refused in the forward pass
          ops.grid(1, dlengths.size(), Fill<L>{dlengths.ptr<L>(), dlengths.size(), L(0)});
      });
  }
  driver.backward(call_arrays<T>(p, c.inputs, c.outputs.back(), s.lengths), b, s.values);
}

}  // namespace mx::op::rnn

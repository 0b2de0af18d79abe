// GPU kernels of SequenceMask, SequenceLast and SequenceReverse: the
// element functors of sequence_kernels.h, one thread per output element,
// for every dtype (float16 as CUDA's __half).
#include "op/cuda/device_value.cuh"
#include "op/cuda/launch.cuh"
#include "op/cuda/sequence_gpu.h"
#include "op/nn/sequence_kernels.h"

namespace mx::op::cuda {
namespace {

// fn(TypeTag<C>) for the call's dtype, nothing for an empty output.
template <typename Fn>
void for_dtype(const SequenceCall& call, Fn fn) {
  if (call.req == OpReq::kNull || call.out.size() == 0) return;
  dispatch_dtype(call.out.dtype, fn);
}

template <typename C>
DeviceType<C> device_value(float v) {
  if constexpr (is_half_like_v<C>)
    return kernels::HalfOps<DeviceType<C>>::from_float(v);
  else
    return kernels::convert_value<C>(v);
}

}  // namespace

void sequence_mask_gpu(const SequenceCall& call, void* stream, const char* where) {
  for_dtype(call, [&](auto tag) {
    using C = typename decltype(tag)::type;
    using T = DeviceType<C>;
    launch_elements(
        call.out.size(), stream_of(stream), where,
        SequenceMaskElements<T>{call.view, device_ptr<C>(call.in), device_ptr<C>(call.out),
                                call.lengths, device_value<C>(call.value), call.req});
  });
}

void sequence_last_gpu(const SequenceCall& call, void* stream, const char* where) {
  for_dtype(call, [&](auto tag) {
    using C = typename decltype(tag)::type;
    using T = DeviceType<C>;
    launch_elements(call.out.size(), stream_of(stream), where,
                    SequenceLastElements<T>{call.view, device_ptr<C>(call.in),
                                            device_ptr<C>(call.out), call.lengths, call.req});
  });
}

void sequence_last_grad_gpu(const SequenceCall& call, void* stream, const char* where) {
  for_dtype(call, [&](auto tag) {
    using C = typename decltype(tag)::type;
    using T = DeviceType<C>;
    launch_elements(call.out.size(), stream_of(stream), where,
                    SequenceLastGradElements<T>{call.view, device_ptr<C>(call.in),
                                                device_ptr<C>(call.out), call.lengths, call.req});
  });
}

void sequence_reverse_gpu(const SequenceCall& call, void* stream, const char* where) {
  for_dtype(call, [&](auto tag) {
    using C = typename decltype(tag)::type;
    using T = DeviceType<C>;
    launch_elements(call.out.size(), stream_of(stream), where,
                    SequenceReverseElements<T>{call.view, device_ptr<C>(call.in),
                                               device_ptr<C>(call.out), call.lengths, call.req});
  });
}

}  // namespace mx::op::cuda

#include "ndarray/elementwise.h"

namespace mx {
namespace {

// One tight loop per (op, dtype): the switch on op sits outside the loop so
// the compiler vectorizes the body.
template <typename T, typename F>
void map2(const T* a, const T* b, T* out, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i)
    out[i] =
        static_cast<T>(f(static_cast<ComputeType<T>>(a[i]), static_cast<ComputeType<T>>(b[i])));
}

template <typename T, typename F>
void map1(const T* a, T* out, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(f(static_cast<ComputeType<T>>(a[i])));
}

}  // namespace

void binary_kernel_cpu(BinaryOp op, DType dtype, const void* a, const void* b, void* out,
                       int64_t n) {
  dispatch_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    auto pa = static_cast<const T*>(a);
    auto pb = static_cast<const T*>(b);
    auto po = static_cast<T*>(out);
    switch (op) {
      case BinaryOp::kAdd: map2(pa, pb, po, n, [](C x, C y) { return x + y; }); break;
      case BinaryOp::kSub: map2(pa, pb, po, n, [](C x, C y) { return x - y; }); break;
      case BinaryOp::kMul: map2(pa, pb, po, n, [](C x, C y) { return x * y; }); break;
      case BinaryOp::kDiv: map2(pa, pb, po, n, [](C x, C y) { return safe_divide(x, y); }); break;
    }
  });
}

void scalar_kernel_cpu(ScalarOp op, DType dtype, const void* a, double s, void* out, int64_t n) {
  dispatch_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const C c = static_cast<C>(s);
    auto pa = static_cast<const T*>(a);
    auto po = static_cast<T*>(out);
    switch (op) {
      case ScalarOp::kAdd: map1(pa, po, n, [c](C x) { return x + c; }); break;
      case ScalarOp::kSub: map1(pa, po, n, [c](C x) { return x - c; }); break;
      case ScalarOp::kRSub: map1(pa, po, n, [c](C x) { return c - x; }); break;
      case ScalarOp::kMul: map1(pa, po, n, [c](C x) { return x * c; }); break;
      case ScalarOp::kDiv: map1(pa, po, n, [c](C x) { return safe_divide(x, c); }); break;
      case ScalarOp::kRDiv: map1(pa, po, n, [c](C x) { return safe_divide(c, x); }); break;
    }
  });
}

void fill_kernel_cpu(DType dtype, void* out, double value, int64_t n) {
  dispatch_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = static_cast<T>(static_cast<ComputeType<T>>(value));
    auto po = static_cast<T*>(out);
    for (int64_t i = 0; i < n; ++i) po[i] = v;
  });
}

#if !MX_USE_CUDA
// Without CUDA no GPU array can exist (allocation fails first), so these are
// unreachable; they keep the link complete.
void binary_kernel_gpu(BinaryOp, DType, const void*, const void*, void*, int64_t, void*) {
  throw Error("this build of mx has no CUDA support");
}
void scalar_kernel_gpu(ScalarOp, DType, const void*, double, void*, int64_t, void*) {
  throw Error("this build of mx has no CUDA support");
}
void fill_kernel_gpu(DType, void*, double, int64_t, void*) {
  throw Error("this build of mx has no CUDA support");
}
#endif

}  // namespace mx

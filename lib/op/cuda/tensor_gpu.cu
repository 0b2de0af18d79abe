#include <algorithm>
#include <type_traits>

#include "op/cuda/device_value.cuh"
#include "op/cuda/launch.cuh"
#include "op/cuda/tensor_gpu.h"
#include "op/tensor/init_kernels.h"
#include "op/tensor/shape_kernels.h"
#include "op/tensor/tensor_kernels.h"

namespace mx::op::cuda {

void copy_gpu(const RunContext& rctx, const char* where, const TensorRef& dst, const TensorRef& src,
              OpReq req) {
  MX_CHECK(dst.dtype == src.dtype && dst.size() == src.size(), where,
           ": copy between tensors of different types or sizes");
  const int64_t n = src.size();
  if (req == OpReq::kNull || n == 0) return;
  const cudaStream_t stream = stream_of(rctx.stream);
  if (req != OpReq::kAdd) {
    if (dst.data != src.data)
      MX_CUDA_CHECK(
          cudaMemcpyAsync(dst.data, src.data, static_cast<size_t>(n) * dtype_size(src.dtype),
                          cudaMemcpyDeviceToDevice, stream),
          where);
    return;
  }
  dispatch_dtype(src.dtype, [&](auto tag) {
    using T = DeviceType<typename decltype(tag)::type>;
    launch_elements(
        n, stream, where,
        kernels::AddCopy<T>{static_cast<T*>(dst.data), static_cast<const T*>(src.data)});
  });
}

void zero_gpu(const RunContext& rctx, const char* where, const TensorRef& t) {
  const size_t bytes = static_cast<size_t>(t.size()) * dtype_size(t.dtype);
  if (bytes == 0) return;
  MX_CUDA_CHECK(cudaMemsetAsync(t.data, 0, bytes, stream_of(rctx.stream)), where);
}

void copy_row_blocks_gpu(const RunContext& rctx, const char* where, DType dtype, void* dst,
                         const void* src, const kernels::RowBlocks& b, OpReq req) {
  if (req == OpReq::kNull || b.rows == 0 || b.len == 0) return;
  dispatch_dtype(dtype, [&](auto tag) {
    using T = DeviceType<typename decltype(tag)::type>;
    launch_elements(
        b.rows * b.len, stream_of(rctx.stream), where,
        kernels::RowBlockCopy<T>{static_cast<T*>(dst), static_cast<const T*>(src), b, req});
  });
}

namespace {

constexpr int kTile = 32, kTileRows = 8, kTileThreads = kTile * kTileRows;

// One 32x32 tile of every (a, b) plane numbered blockIdx.z, blockIdx.z +
// gridDim.z, ...: read along b (threadIdx.x), written along a.
template <typename T>
__global__ void __launch_bounds__(kTileThreads)
    transpose_tiles_kernel(T* out, const T* in, kernels::TransposeTiles t, OpReq req) {
  // Raw storage: the 16-bit types' constructors are not for __shared__.
  __shared__ __align__(16) unsigned char raw[kTile * (kTile + 1) * sizeof(T)];
  T* tile = reinterpret_cast<T*>(raw);  // [a][b], one column of padding
  const int64_t a0 = blockIdx.x * static_cast<int64_t>(kTile);
  const int64_t b0 = blockIdx.y * static_cast<int64_t>(kTile);
  const int64_t planes = t.rest_count();
  for (int64_t r = blockIdx.z; r < planes; r += gridDim.z) {
    int64_t in_off, out_off;
    t.rest_offsets(r, in_off, out_off);
    for (int k = threadIdx.y; k < kTile; k += kTileRows) {
      const int64_t a = a0 + k, b = b0 + threadIdx.x;
      if (a < t.a_dim && b < t.b_dim)
        tile[k * (kTile + 1) + threadIdx.x] = in[in_off + b + a * t.a_in_stride];
    }
    __syncthreads();
    for (int k = threadIdx.y; k < kTile; k += kTileRows) {
      const int64_t b = b0 + k, a = a0 + threadIdx.x;
      if (a < t.a_dim && b < t.b_dim)
        kernels::store_value(out + out_off + b * t.b_out_stride + a, req,
                             tile[threadIdx.x * (kTile + 1) + k]);
    }
    __syncthreads();  // the tile is refilled for the next plane
  }
}

}  // namespace

void transpose_gpu(const RunContext& rctx, const char* where, const TensorRef& in,
                   const std::vector<int>& perm, const TensorRef& out, OpReq req) {
  if (req == OpReq::kNull || in.size() == 0) return;
  const kernels::TransposeIndex index = kernels::transpose_index(in.shape, perm, where);
  const kernels::TransposeTiles tiles = kernels::transpose_tiles(index);
  const int64_t a_tiles = (tiles.a_dim + kTile - 1) / kTile,
                b_tiles = (tiles.b_dim + kTile - 1) / kTile;
  // Tiles where both innermost axes are long enough to fill them.
  const bool tiled =
      tiles.a_dim >= 16 && tiles.b_dim >= 16 && a_tiles <= 0x7fffffffLL && b_tiles <= 65535;
  dispatch_dtype(in.dtype, [&](auto tag) {
    using C = typename decltype(tag)::type;
    using T = DeviceType<C>;
    if (tiled) {
      const dim3 grid(static_cast<unsigned>(a_tiles), static_cast<unsigned>(b_tiles),
                      static_cast<unsigned>(std::min<int64_t>(tiles.rest_count(), 65535)));
      transpose_tiles_kernel<T><<<grid, dim3(kTile, kTileRows), 0, stream_of(rctx.stream)>>>(
          device_ptr<C>(out), device_ptr<C>(in), tiles, req);
      check_launch("transpose_tiles_kernel", where);
      return;
    }
    launch_elements(in.size(), stream_of(rctx.stream), where,
                    kernels::TransposeCopy<T>{device_ptr<C>(out), device_ptr<C>(in), index, req});
  });
}

void strided_gather_gpu(const RunContext& rctx, const char* where, DType dtype, void* out,
                        const void* in, const kernels::StridedIndex& index, int64_t n, OpReq req) {
  if (req == OpReq::kNull || n == 0) return;
  dispatch_dtype(dtype, [&](auto tag) {
    using T = DeviceType<typename decltype(tag)::type>;
    launch_elements(
        n, stream_of(rctx.stream), where,
        kernels::StridedGather<T>{static_cast<T*>(out), static_cast<const T*>(in), index, req});
  });
}

void strided_scatter_gpu(const RunContext& rctx, const char* where, DType dtype, void* out,
                         const void* in, const kernels::StridedIndex& index, int64_t n, OpReq req) {
  if (req == OpReq::kNull || n == 0) return;
  dispatch_dtype(dtype, [&](auto tag) {
    using T = DeviceType<typename decltype(tag)::type>;
    launch_elements(
        n, stream_of(rctx.stream), where,
        kernels::StridedScatter<T>{static_cast<T*>(out), static_cast<const T*>(in), index, req});
  });
}

namespace {

// on_value/off_value in the output type, as the CPU operator converts them
// (a plain static_cast; float16 through float).
template <typename T>
DeviceType<T> value_as(double v) {
  if constexpr (is_half_like_v<T>)
    return kernels::HalfOps<DeviceType<T>>::from_float(static_cast<float>(v));
  else
    return static_cast<T>(v);
}

}  // namespace

void one_hot_gpu(const RunContext& rctx, const char* where, const TensorRef& indices, int64_t depth,
                 double on_value, double off_value, const TensorRef& out, OpReq req) {
  if (req == OpReq::kNull || out.size() == 0) return;
  dispatch_dtype(indices.dtype, [&](auto index_tag) {
    using IC = typename decltype(index_tag)::type;
    dispatch_dtype(out.dtype, [&](auto out_tag) {
      using C = typename decltype(out_tag)::type;
      using T = DeviceType<C>;
      launch_elements(
          out.size(), stream_of(rctx.stream), where,
          kernels::OneHot<T, DeviceType<IC>>{device_ptr<C>(out), device_ptr<IC>(indices), depth,
                                             value_as<C>(on_value), value_as<C>(off_value), req});
    });
  });
}

void fill_gpu(const RunContext& rctx, const char* where, const TensorRef& out, double value,
              OpReq req) {
  if (req == OpReq::kNull || out.size() == 0) return;
  if (value == 0 && req != OpReq::kAdd) {
    zero_gpu(rctx, where, out);
    return;
  }
  dispatch_dtype(out.dtype, [&](auto tag) {
    using C = typename decltype(tag)::type;
    launch_elements(out.size(), stream_of(rctx.stream), where,
                    kernels::FillValue<DeviceType<C>>{device_ptr<C>(out), value, req});
  });
}

void arange_gpu(const RunContext& rctx, const char* where, const TensorRef& out, double start,
                double step, int64_t repeat, OpReq req) {
  if (req == OpReq::kNull || out.size() == 0) return;
  dispatch_dtype(out.dtype, [&](auto tag) {
    using C = typename decltype(tag)::type;
    launch_elements(
        out.size(), stream_of(rctx.stream), where,
        kernels::ArangeFill<DeviceType<C>>{device_ptr<C>(out), start, step, repeat, req});
  });
}

void cast_gpu(const RunContext& rctx, const char* where, const TensorRef& src, const TensorRef& dst,
              OpReq req) {
  if (req == OpReq::kNull || src.size() == 0) return;
  dispatch_dtype(src.dtype, [&](auto from_tag) {
    using FC = typename decltype(from_tag)::type;
    dispatch_dtype(dst.dtype, [&](auto to_tag) {
      using TC = typename decltype(to_tag)::type;
      launch_elements(src.size(), stream_of(rctx.stream), where,
                      kernels::CastValues<DeviceType<TC>, DeviceType<FC>>{
                          device_ptr<TC>(dst), device_ptr<FC>(src), req});
    });
  });
}

}  // namespace mx::op::cuda

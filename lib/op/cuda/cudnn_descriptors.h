// RAII owners of cuDNN descriptors (tensor, filter, convolution, pooling,
// LRN). A descriptor is host-side metadata, cheap to create; the operators
// build the ones they need per call. Each wrapper creates its descriptor in
// the constructor and destroys it in the destructor; the set_* functions
// check the return code and name the operator in errors.
// Only compiled with MX_USE_CUDA.
#pragma once

#include <cudnn.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/dtype.h"

namespace mx::op::cuda {

// The cuDNN data type of a dtype (float32, float64, float16, int8, uint8,
// int32, int64); throws naming `where` for one cuDNN has no type for.
cudnnDataType_t cudnn_data_type(DType dtype, std::string_view where);

// Dims and strides of a cuDNN tensor (outermost first).
struct TensorLayout {
  std::vector<int> dims, strides;
};

// A packed (contiguous, row-major) layout of `dims`.
TensorLayout packed_layout(const std::vector<int64_t>& dims, std::string_view where);

class TensorDesc {
 public:
  explicit TensorDesc(std::string_view where);
  ~TensorDesc();
  TensorDesc(const TensorDesc&) = delete;
  TensorDesc& operator=(const TensorDesc&) = delete;

  // Packed NCHW.
  void set_4d(DType dtype, int64_t n, int64_t c, int64_t h, int64_t w);
  // Any rank from 3 to 8 (cuDNN's Nd tensors need at least 3 dims; pad
  // with trailing 1s) with explicit strides.
  void set_nd(DType dtype, const TensorLayout& layout);
  cudnnTensorDescriptor_t get() const { return desc_; }

 private:
  cudnnTensorDescriptor_t desc_ = nullptr;
  std::string where_;
};

class FilterDesc {
 public:
  explicit FilterDesc(std::string_view where);
  ~FilterDesc();
  FilterDesc(const FilterDesc&) = delete;
  FilterDesc& operator=(const FilterDesc&) = delete;

  // (K output channels, C input channels per group, kh, kw), NCHW order.
  void set_4d(DType dtype, int64_t k, int64_t c, int64_t h, int64_t w);
  cudnnFilterDescriptor_t get() const { return desc_; }

 private:
  cudnnFilterDescriptor_t desc_ = nullptr;
  std::string where_;
};

class ConvolutionDesc {
 public:
  explicit ConvolutionDesc(std::string_view where);
  ~ConvolutionDesc();
  ConvolutionDesc(const ConvolutionDesc&) = delete;
  ConvolutionDesc& operator=(const ConvolutionDesc&) = delete;

  // A 2-D cross-correlation (what deep-learning frameworks call
  // convolution) computed in `compute` precision, with `groups` groups and
  // the math type (CUDNN_DEFAULT_MATH keeps float32 free of TF32).
  void set_2d(std::array<int, 2> pad, std::array<int, 2> stride, std::array<int, 2> dilation,
              cudnnDataType_t compute, int groups, cudnnMathType_t math);
  cudnnConvolutionDescriptor_t get() const { return desc_; }

 private:
  cudnnConvolutionDescriptor_t desc_ = nullptr;
  std::string where_;
};

class PoolingDesc {
 public:
  explicit PoolingDesc(std::string_view where);
  ~PoolingDesc();
  PoolingDesc(const PoolingDesc&) = delete;
  PoolingDesc& operator=(const PoolingDesc&) = delete;

  // A 2-D window; NaNs are propagated like the CPU kernels do.
  void set_2d(cudnnPoolingMode_t mode, std::array<int, 2> window, std::array<int, 2> pad,
              std::array<int, 2> stride);
  cudnnPoolingDescriptor_t get() const { return desc_; }

 private:
  cudnnPoolingDescriptor_t desc_ = nullptr;
  std::string where_;
};

class LRNDesc {
 public:
  explicit LRNDesc(std::string_view where);
  ~LRNDesc();
  LRNDesc(const LRNDesc&) = delete;
  LRNDesc& operator=(const LRNDesc&) = delete;

  // cuDNN's parameters: window n, alpha, beta, k (see cudnnSetLRNDescriptor).
  void set(unsigned n, double alpha, double beta, double k);
  cudnnLRNDescriptor_t get() const { return desc_; }

 private:
  cudnnLRNDescriptor_t desc_ = nullptr;
  std::string where_;
};

}  // namespace mx::op::cuda

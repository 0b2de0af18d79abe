#include "op/cuda/cudnn_descriptors.h"

#include <limits>

#include "op/cuda/cuda_check.h"

namespace mx::op::cuda {
namespace {

int to_int(int64_t value, std::string_view what, std::string_view where) {
  if (value < 0 || value > std::numeric_limits<int>::max())
    throw Error(str(where, ": ", what, " ", value, " is out of cuDNN's int range"));
  return static_cast<int>(value);
}

}  // namespace

cudnnDataType_t cudnn_data_type(DType dtype, std::string_view where) {
  switch (dtype) {
    case DType::kFloat32: return CUDNN_DATA_FLOAT;
    case DType::kFloat64: return CUDNN_DATA_DOUBLE;
    case DType::kFloat16: return CUDNN_DATA_HALF;
    case DType::kBFloat16: return CUDNN_DATA_BFLOAT16;
    case DType::kInt8: return CUDNN_DATA_INT8;
    case DType::kUint8: return CUDNN_DATA_UINT8;
    case DType::kInt32: return CUDNN_DATA_INT32;
    case DType::kInt64: return CUDNN_DATA_INT64;
  }
  throw Error(str(where, ": no cuDNN data type for ", dtype_name(dtype)));
}

TensorLayout packed_layout(const std::vector<int64_t>& dims, std::string_view where) {
  TensorLayout layout;
  layout.dims.resize(dims.size());
  layout.strides.resize(dims.size());
  int64_t stride = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    layout.dims[i] = to_int(dims[i], "dimension", where);
    layout.strides[i] = to_int(stride, "stride", where);
    stride *= dims[i];
  }
  return layout;
}

TensorDesc::TensorDesc(std::string_view where) : where_(where) {
  MX_CUDA_CHECK(cudnnCreateTensorDescriptor(&desc_), where_);
}
TensorDesc::~TensorDesc() { cudnnDestroyTensorDescriptor(desc_); }

void TensorDesc::set_4d(DType dtype, int64_t n, int64_t c, int64_t h, int64_t w) {
  MX_CUDA_CHECK(
      cudnnSetTensor4dDescriptor(desc_, CUDNN_TENSOR_NCHW, cudnn_data_type(dtype, where_),
                                 to_int(n, "batch", where_), to_int(c, "channels", where_),
                                 to_int(h, "height", where_), to_int(w, "width", where_)),
      where_);
}

void TensorDesc::set_nd(DType dtype, const TensorLayout& layout) {
  MX_CHECK(layout.dims.size() == layout.strides.size() && layout.dims.size() >= 3 &&
               layout.dims.size() <= CUDNN_DIM_MAX,
           where_, ": a cuDNN tensor needs 3 to ", CUDNN_DIM_MAX, " dims, got ",
           layout.dims.size());
  MX_CUDA_CHECK(cudnnSetTensorNdDescriptor(desc_, cudnn_data_type(dtype, where_),
                                           static_cast<int>(layout.dims.size()), layout.dims.data(),
                                           layout.strides.data()),
                where_);
}

FilterDesc::FilterDesc(std::string_view where) : where_(where) {
  MX_CUDA_CHECK(cudnnCreateFilterDescriptor(&desc_), where_);
}
FilterDesc::~FilterDesc() { cudnnDestroyFilterDescriptor(desc_); }

void FilterDesc::set_4d(DType dtype, int64_t k, int64_t c, int64_t h, int64_t w) {
  MX_CUDA_CHECK(cudnnSetFilter4dDescriptor(
                    desc_, cudnn_data_type(dtype, where_), CUDNN_TENSOR_NCHW,
                    to_int(k, "filters", where_), to_int(c, "channels", where_),
                    to_int(h, "kernel height", where_), to_int(w, "kernel width", where_)),
                where_);
}

ConvolutionDesc::ConvolutionDesc(std::string_view where) : where_(where) {
  MX_CUDA_CHECK(cudnnCreateConvolutionDescriptor(&desc_), where_);
}
ConvolutionDesc::~ConvolutionDesc() { cudnnDestroyConvolutionDescriptor(desc_); }

void ConvolutionDesc::set_2d(std::array<int, 2> pad, std::array<int, 2> stride,
                             std::array<int, 2> dilation, cudnnDataType_t compute, int groups,
                             cudnnMathType_t math) {
  MX_CUDA_CHECK(
      cudnnSetConvolution2dDescriptor(desc_, pad[0], pad[1], stride[0], stride[1], dilation[0],
                                      dilation[1], CUDNN_CROSS_CORRELATION, compute),
      where_);
  MX_CUDA_CHECK(cudnnSetConvolutionGroupCount(desc_, groups), where_);
  MX_CUDA_CHECK(cudnnSetConvolutionMathType(desc_, math), where_);
}

PoolingDesc::PoolingDesc(std::string_view where) : where_(where) {
  MX_CUDA_CHECK(cudnnCreatePoolingDescriptor(&desc_), where_);
}
PoolingDesc::~PoolingDesc() { cudnnDestroyPoolingDescriptor(desc_); }

void PoolingDesc::set_2d(cudnnPoolingMode_t mode, std::array<int, 2> window, std::array<int, 2> pad,
                         std::array<int, 2> stride) {
  MX_CUDA_CHECK(cudnnSetPooling2dDescriptor(desc_, mode, CUDNN_PROPAGATE_NAN, window[0], window[1],
                                            pad[0], pad[1], stride[0], stride[1]),
                where_);
}

LRNDesc::LRNDesc(std::string_view where) : where_(where) {
  MX_CUDA_CHECK(cudnnCreateLRNDescriptor(&desc_), where_);
}
LRNDesc::~LRNDesc() { cudnnDestroyLRNDescriptor(desc_); }

void LRNDesc::set(unsigned n, double alpha, double beta, double k) {
  MX_CUDA_CHECK(cudnnSetLRNDescriptor(desc_, n, alpha, beta, k), where_);
}

}  // namespace mx::op::cuda

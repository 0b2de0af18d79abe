// The CPU convolution engine shared by Convolution and Deconvolution:
// im2col/col2im and GEMMs over blocks of images. A deconvolution is the
// transpose of a convolution, so both operators are written in terms of the
// three passes of one convolution (forward, data gradient, weight gradient).
//
// Work is split over the thread budget by images: each part of the batch
// has its own column buffer (from the TempSpace resource) and runs
// single-threaded GEMMs on blocks of several images at once, so that the
// GEMMs are wide even when the feature maps are small (4x4 in a CIFAR
// ResNet). With fewer images than threads the GEMMs themselves are split.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "base/shape.h"
#include "op/resources.h"
#include "op/tensor_ref.h"

namespace mx::op {

// Kernel, stride, dilation and padding of a 1-D or 2-D window, as the user
// wrote them: empty stride/dilate/pad mean MXNet's defaults (1, 1, 0).
struct WindowSpec {
  Shape kernel, stride, dilate, pad;
};

// The window normalized to two spatial dims (a 1-D window has height 1).
struct Window2d {
  int ndim = 2;  // spatial dims of the operator: 1 or 2
  std::array<int64_t, 2> kernel{1, 1}, stride{1, 1}, dilate{1, 1}, pad{0, 0};

  int64_t dilated(int d) const { return (kernel[d] - 1) * dilate[d] + 1; }
};

// Checks the ranks and values of `spec` (throws InputError naming `op`) and
// fills the defaults.
Window2d make_window(const WindowSpec& spec, const std::string& op);

// Geometry of one convolution: input (N, C, H, W), output (N, F, Ho, Wo),
// weight (F, C / groups, kh, kw).
struct ConvGeom {
  int64_t batch = 0, channels = 0, height = 1, width = 1;
  int64_t filters = 0, out_height = 1, out_width = 1;
  int64_t groups = 1;
  Window2d win;

  int64_t in_plane() const { return height * width; }
  int64_t out_plane() const { return out_height * out_width; }
  int64_t window_size() const { return win.kernel[0] * win.kernel[1]; }
  // Rows of the column matrix of one group.
  int64_t group_rows() const { return channels / groups * window_size(); }
  int64_t weight_size() const { return filters * group_rows(); }
};

// A convolution of `image` (N, channels, spatial) into `result` (N,
// filters, spatial) over `win`; 1-D shapes get height 1.
ConvGeom conv_geom(const Window2d& win, int64_t groups, const Shape& image, int64_t channels,
                   const Shape& result, int64_t filters);

// A deconvolution's pad and adj per dim of the 2-D window: from
// target_shape when any of it is non-zero (MXNet's InferPad), else win.pad
// and `adj`. `data` is the deconvolution's input (dims may be -1).
struct DeconvPadAdj {
  std::array<int64_t, 2> pad{0, 0}, adj{0, 0};
};
DeconvPadAdj deconv_pad_adj(const Window2d& win, const Shape& adj, const Shape& target_shape,
                            const Shape& data);

// The convolution whose transpose a deconvolution is: its input is the
// deconvolution's output `out` and its output the deconvolution's `data`;
// the weight (data channels, num_filter / groups, kernel) is its filter.
ConvGeom deconvolution_geom(Window2d win, const Shape& adj, const Shape& target_shape,
                            int64_t groups, int64_t num_filter, const Shape& data,
                            const Shape& out);

// Bytes of temporary space at most (MXNet's `workspace`, in MB).
size_t workspace_bytes(int64_t workspace_mb);

// y = conv(x, w) + bias (bias may be null).
template <typename T>
void conv_forward(const ConvGeom& g, const T* x, const T* w, const T* bias, T* y, OpReq req,
                  const OpResources& res, size_t max_temp_bytes);

// The gradients of a convolution: dx from dy and w, dw from x and dy. Either
// may be skipped with a null pointer (or OpReq::kNull).
template <typename T>
void conv_backward(const ConvGeom& g, const T* x, const T* dy, const T* w, T* dx, OpReq dx_req,
                   T* dw, OpReq dw_req, const OpResources& res, size_t max_temp_bytes);

// db[f] (req) sum over images and positions of dy (N, F, plane).
template <typename T>
void bias_gradient(const T* dy, int64_t batch, int64_t filters, int64_t plane, T* db, OpReq req);

// y[n, f, :] += bias[f] for y (N, F, plane).
template <typename T>
void add_bias(T* y, const T* bias, int64_t batch, int64_t filters, int64_t plane);

}  // namespace mx::op

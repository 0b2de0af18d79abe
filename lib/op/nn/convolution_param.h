// Convolution's and Deconvolution's parameters (convolution.cc), in a header
// so that code outside the operators' file reads them typed
// (OpInstance::params_as), as ONNX export does.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "base/error.h"
#include "base/param.h"
#include "base/strings.h"
#include "op/nn/conv_util.h"

namespace mx::op {

enum class ConvLayout { kNone, kNCW, kNCHW };
enum class CudnnTune { kNone, kOff, kLimited, kFastest };

// The declarations and checks both operators share.
namespace conv_decl {

// Fields both operators share, declared in MXNet's order.
template <typename P>
void declare_window(ParamDecl<P>& d) {
  d.field("kernel", &P::kernel).describe("Kernel size: (w,) or (h, w).");
  d.field("stride", &P::stride)
      .set_default(Shape::scalar())
      .describe("Stride: (w,) or (h, w). Defaults to 1 for each dimension.");
  d.field("dilate", &P::dilate)
      .set_default(Shape::scalar())
      .describe("Dilation: (w,) or (h, w). Defaults to 1 for each dimension.");
  d.field("pad", &P::pad)
      .set_default(Shape::scalar())
      .describe("Zero padding: (w,) or (h, w). Defaults to no padding.");
}

template <typename P>
void declare_common(ParamDecl<P>& d, int64_t workspace, bool no_bias) {
  d.field("num_filter", &P::num_filter).set_range(1, 100000).describe("Number of output channels.");
  d.field("num_group", &P::num_group)
      .set_default(1)
      .set_lower_bound(1)
      .describe("Number of groups: input and output channels are split into this many groups.");
  d.field("workspace", &P::workspace)
      .set_default(workspace)
      .set_range(0, 8192)
      .describe("Maximum temporary workspace in MB (at least one image's columns are used).");
  d.field("no_bias", &P::no_bias).set_default(no_bias).describe("Disable the bias.");
  d.field("cudnn_tune", &P::cudnn_tune)
      .set_default(CudnnTune::kNone)
      .add_enum("None", CudnnTune::kNone)
      .add_enum("off", CudnnTune::kOff)
      .add_enum("limited_workspace", CudnnTune::kLimited)
      .add_enum("fastest", CudnnTune::kFastest)
      .describe(
          "cuDNN algorithm selection on a GPU: 'off' takes cuDNN's heuristic choice, 'None' and "
          "'limited_workspace' the fastest measured algorithm within 'workspace', 'fastest' the "
          "fastest measured one. The CPU ignores it.");
  d.field("cudnn_off", &P::cudnn_off)
      .set_default(false)
      .describe(
          "Turn off cuDNN (accepted for compatibility and ignored: on a GPU this operator "
          "runs on cuDNN only; the CPU does not use it).");
  d.field("layout", &P::layout)
      .set_default(ConvLayout::kNone)
      .add_enum("None", ConvLayout::kNone)
      .add_enum("NCW", ConvLayout::kNCW)
      .add_enum("NCHW", ConvLayout::kNCHW)
      .describe("Data layout: NCW for 1-D, NCHW for 2-D (None: the default for the kernel).");
}

// Checks what the field declarations cannot: ranks, group divisibility, layout.
template <typename P>
Window2d check_window(const P& p, const std::string& owner) {
  Window2d w = make_window(WindowSpec{p.kernel, p.stride, p.dilate, p.pad}, owner);
  if (p.num_filter % p.num_group != 0)
    throw InputError(
        str(owner, ": num_filter ", p.num_filter, " is not divisible by num_group ", p.num_group));
  if ((p.layout == ConvLayout::kNCW && w.ndim != 1) ||
      (p.layout == ConvLayout::kNCHW && w.ndim != 2))
    throw InputError(str(owner, ": layout ", p.layout == ConvLayout::kNCW ? "NCW" : "NCHW",
                         " does not match the ", w.ndim, "-D kernel ", p.kernel.to_string()));
  return w;
}

}  // namespace conv_decl

struct ConvolutionParam : Params<ConvolutionParam> {
  Shape kernel, stride, dilate, pad;
  int num_filter = 0;
  int num_group = 1;
  int64_t workspace = 1024;
  bool no_bias = false;
  CudnnTune cudnn_tune = CudnnTune::kNone;
  bool cudnn_off = false;
  ConvLayout layout = ConvLayout::kNone;

  static void declare(ParamDecl<ConvolutionParam>& d) {
    conv_decl::declare_window(d);
    conv_decl::declare_common(d, 1024, false);
  }
  static ConvolutionParam from_strings(const std::map<std::string, std::string>& attrs,
                                       const std::string& owner) {
    ConvolutionParam p = Params::from_strings(attrs, owner);
    conv_decl::check_window(p, owner);
    return p;
  }
};

struct DeconvolutionParam : Params<DeconvolutionParam> {
  Shape kernel, stride, dilate, pad, adj, target_shape;
  int num_filter = 0;
  int num_group = 1;
  int64_t workspace = 512;
  bool no_bias = true;
  CudnnTune cudnn_tune = CudnnTune::kNone;
  bool cudnn_off = false;
  ConvLayout layout = ConvLayout::kNone;

  static void declare(ParamDecl<DeconvolutionParam>& d) {
    conv_decl::declare_window(d);
    d.field("adj", &DeconvolutionParam::adj)
        .set_default(Shape::scalar())
        .describe(
            "Extra rows/columns at the end of the output: (w,) or (h, w). Ignored when "
            "target_shape is set.");
    d.field("target_shape", &DeconvolutionParam::target_shape)
        .set_default(Shape::scalar())
        .describe("Output spatial shape: (w,) or (h, w); pad and adj are then computed from it.");
    conv_decl::declare_common(d, 512, true);
  }
  static DeconvolutionParam from_strings(const std::map<std::string, std::string>& attrs,
                                         const std::string& owner) {
    DeconvolutionParam p = Params::from_strings(attrs, owner);
    const Window2d w = conv_decl::check_window(p, owner);
    auto check = [&](const char* name, const Shape& s) {
      if (s.ndim() > 0 && s.ndim() != w.ndim)
        throw InputError(str(owner, ": ", name, " ", s.to_string(), " must have ", w.ndim,
                             " dimension(s), like kernel ", p.kernel.to_string()));
      for (int i = 0; i < s.ndim(); ++i)
        if (s[i] < 0) throw InputError(str(owner, ": ", name, " ", s.to_string(), " is negative"));
    };
    check("adj", p.adj);
    check("target_shape", p.target_shape);
    return p;
  }

  bool uses_target() const {
    for (int i = 0; i < target_shape.ndim(); ++i)
      if (target_shape[i] != 0) return true;
    return false;
  }
};

}  // namespace mx::op

// Pooling's parameters (pooling.cc), in a header so that code outside the
// operator's file reads them typed (OpInstance::params_as), as ONNX export
// does.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "base/error.h"
#include "base/param.h"
#include "base/strings.h"
#include "op/nn/conv_util.h"

namespace mx::op {

enum class PoolType { kMax, kAvg, kSum };
enum class PoolingConvention { kValid, kFull };
enum class PoolLayout { kNone, kNCW, kNCHW };

struct PoolingParam : Params<PoolingParam> {
  Shape kernel;
  PoolType pool_type = PoolType::kMax;
  bool global_pool = false;
  bool cudnn_off = false;
  PoolingConvention pooling_convention = PoolingConvention::kValid;
  Shape stride, pad;
  std::optional<bool> count_include_pad;
  PoolLayout layout = PoolLayout::kNone;

  static void declare(ParamDecl<PoolingParam>& d) {
    d.field("kernel", &PoolingParam::kernel)
        .set_default(Shape::scalar())
        .describe("Pooling window: (w,) or (h, w). Ignored with global_pool.");
    d.field("pool_type", &PoolingParam::pool_type)
        .set_default(PoolType::kMax)
        .add_enum("max", PoolType::kMax)
        .add_enum("avg", PoolType::kAvg)
        .add_enum("sum", PoolType::kSum)
        .describe("Pooling type ('lp' pooling is not supported).");
    d.field("global_pool", &PoolingParam::global_pool)
        .set_default(false)
        .describe("Pool over the whole spatial extent (kernel, stride and pad are ignored).");
    d.field("cudnn_off", &PoolingParam::cudnn_off)
        .set_default(false)
        .describe(
            "Turn off cuDNN (accepted for compatibility and ignored: the GPU runs mx's own "
            "pooling kernels, which follow the CPU's rules exactly).");
    d.field("pooling_convention", &PoolingParam::pooling_convention)
        .set_default(PoolingConvention::kValid)
        .add_enum("valid", PoolingConvention::kValid)
        .add_enum("full", PoolingConvention::kFull)
        .describe("Output size rounding: 'valid' rounds down, 'full' rounds up.");
    d.field("stride", &PoolingParam::stride)
        .set_default(Shape::scalar())
        .describe("Stride: (w,) or (h, w). Defaults to 1 for each dimension.");
    d.field("pad", &PoolingParam::pad)
        .set_default(Shape::scalar())
        .describe("Padding: (w,) or (h, w). Defaults to no padding.");
    d.field("count_include_pad", &PoolingParam::count_include_pad)
        .set_default(std::nullopt)
        .describe("For avg pooling: count padded positions in the divisor (None means True).");
    d.field("layout", &PoolingParam::layout)
        .set_default(PoolLayout::kNone)
        .add_enum("None", PoolLayout::kNone)
        .add_enum("NCW", PoolLayout::kNCW)
        .add_enum("NCHW", PoolLayout::kNCHW)
        .describe("Data layout: NCW for 1-D, NCHW for 2-D (None: the default).");
  }

  static PoolingParam from_strings(const std::map<std::string, std::string>& attrs,
                                   const std::string& owner) {
    PoolingParam p = Params::from_strings(attrs, owner);
    if (!p.global_pool) {
      if (p.kernel.ndim() <= 0)
        throw InputError(owner + ": parameter 'kernel' is required unless global_pool is True");
      const Window2d w = p.window(owner);
      if ((p.layout == PoolLayout::kNCW && w.ndim != 1) ||
          (p.layout == PoolLayout::kNCHW && w.ndim != 2))
        throw InputError(str(owner, ": layout ", p.layout == PoolLayout::kNCW ? "NCW" : "NCHW",
                             " does not match the ", w.ndim, "-D kernel ", p.kernel.to_string()));
    }
    return p;
  }

  Window2d window(const std::string& owner) const {
    return make_window(WindowSpec{kernel, stride, Shape::scalar(), pad}, owner);
  }
  // The window applied to data of shape `data` (known rank 3 or 4).
  Window2d window_for(const Shape& data) const {
    if (!global_pool) return window("Pooling");
    Window2d w;
    w.ndim = data.ndim() - 2;
    if (w.ndim == 2) w.kernel[0] = data[2];
    w.kernel[1] = data[data.ndim() - 1];
    return w;
  }
};

}  // namespace mx::op

#include "op/nn/conv_util.h"

#include <algorithm>
#include <cstring>

#include "base/error.h"
#include "base/parallel.h"
#include "op/blas.h"
#include "op/infer_util.h"
#include "op/kernel_util.h"

namespace mx::op {
namespace {

// Columns of the lowered input one GEMM works on: enough for OpenBLAS to
// run at speed (a few hundred at least), few enough that the column block
// (rows x columns) stays in the cache between im2col and the GEMM. Small
// images are grouped, large ones cut into bands of output rows. Measured
// with bench_ops (docs/benchmarks.md).
constexpr int64_t kMinColumns = 256;
constexpr int64_t kMaxColumns = 1024;
constexpr size_t kColumnBytes = size_t{2} << 20;  // about the L2 cache of one core

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// A block of columns of the lowered input: output rows [r0, r1) of images
// [n0, n0 + nb). Either several whole images or a band of one image.
struct Block {
  int64_t n0, nb, r0, r1;
  int64_t columns(const ConvGeom& g) const { return nb * (r1 - r0) * g.out_width; }
};

// How a batch is cut: `parts` independent slices of the batch (one per
// thread), each processed in blocks of `images` images x `rows` output rows.
struct Plan {
  int64_t parts = 1;
  int64_t images = 1;
  int64_t rows = 1;
  size_t part_elems = 0;  // temporary elements per part, cache-line aligned
};

// Scratch per part: the column block, an (F x columns) buffer when blocks
// hold several images (their outputs are interleaved), and `fixed` when the
// batch is split over several parts (partial weight gradients).
Plan make_plan(const ConvGeom& g, size_t elem_size, size_t max_bytes, size_t fixed_if_parallel) {
  Plan p;
  p.parts = std::max<int64_t>(1, std::min<int64_t>(parallel_threads(), g.batch));
  const int64_t per_part = ceil_div(g.batch, p.parts);
  const int64_t col_rows = g.channels * g.window_size();
  const int64_t target = std::clamp<int64_t>(
      static_cast<int64_t>(kColumnBytes /
                           (static_cast<size_t>(std::max<int64_t>(col_rows, 1)) * elem_size)),
      kMinColumns, kMaxColumns);
  if (g.out_plane() >= target) {
    // Bands of about `target` columns, of equal height.
    const int64_t bands = ceil_div(g.out_plane(), target);
    p.rows = std::clamp<int64_t>(ceil_div(g.out_height, bands), 1, g.out_height);
  } else {
    p.rows = g.out_height;
    p.images = std::clamp<int64_t>(ceil_div(target, g.out_plane()), 1, per_part);
  }
  auto elems = [&] {
    const int64_t cols = p.images * p.rows * g.out_width;
    size_t e = static_cast<size_t>((col_rows + (p.images > 1 ? g.filters : 0)) * cols);
    e += p.parts > 1 ? fixed_if_parallel : 0;
    return (e + 63) / 64 * 64;  // parts start on separate cache lines
  };
  // Stay within the workspace limit where possible (one row at a time at least).
  while (elems() * elem_size * static_cast<size_t>(p.parts) > max_bytes &&
         (p.images > 1 || p.rows > 1)) {
    if (p.images > 1)
      p.images = std::max<int64_t>(1, p.images / 2);
    else
      p.rows = std::max<int64_t>(1, p.rows / 2);
  }
  p.part_elems = elems();
  return p;
}

// Runs fn(part, first_image, end_image) for every part, in parallel.
template <typename Fn>
void for_parts(const ConvGeom& g, const Plan& p, Fn&& fn) {
  parallel_for(p.parts, 1, [&](int64_t begin, int64_t end) {
    for (int64_t part = begin; part < end; ++part)
      fn(part, part * g.batch / p.parts, (part + 1) * g.batch / p.parts);
  });
}

// Calls fn(block) for the blocks of images [first, last), in order.
template <typename Fn>
void for_blocks(const ConvGeom& g, const Plan& p, int64_t first, int64_t last, Fn&& fn) {
  for (int64_t n0 = first; n0 < last; n0 += p.images) {
    const int64_t nb = std::min(p.images, last - n0);
    for (int64_t r0 = 0; r0 < g.out_height; r0 += p.rows)
      fn(Block{n0, nb, r0, std::min(g.out_height, r0 + p.rows)});
  }
}

// The output positions ow in [lo, hi) read input columns inside [0, W) for
// kernel column kj; the others read padding.
struct ValidRange {
  int64_t lo, hi;
};
ValidRange valid_range(int64_t out_size, int64_t in_size, int64_t offset, int64_t stride) {
  // in = ow * stride + offset must lie in [0, in_size).
  int64_t lo = offset >= 0 ? 0 : ceil_div(-offset, stride);
  int64_t hi = in_size - 1 - offset >= 0 ? (in_size - 1 - offset) / stride + 1 : 0;
  lo = std::min(lo, out_size);
  hi = std::clamp(hi, lo, out_size);
  return {lo, hi};
}

// Channels per parallel chunk so that each chunk moves ~kParallelGrain elements.
int64_t channel_grain(const ConvGeom& g, int64_t columns) {
  return std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, g.window_size() * columns));
}

// Lowers block b of x (N, C, H, W) into col, a (C * kh * kw) x columns
// matrix: row (c, ki, kj), column (image, oh, ow).
template <typename T>
void im2col(const ConvGeom& g, const T* x, const Block& b, T* col) {
  const int64_t ld = b.columns(g), band = (b.r1 - b.r0) * g.out_width;
  const Window2d& w = g.win;
  parallel_for(g.channels, channel_grain(g, ld), [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      for (int64_t ki = 0; ki < w.kernel[0]; ++ki) {
        for (int64_t kj = 0; kj < w.kernel[1]; ++kj) {
          T* row = col + ((c * w.kernel[0] + ki) * w.kernel[1] + kj) * ld;
          const int64_t w_off = kj * w.dilate[1] - w.pad[1];
          const ValidRange r = valid_range(g.out_width, g.width, w_off, w.stride[1]);
          for (int64_t i = 0; i < b.nb; ++i) {
            const T* src = x + ((b.n0 + i) * g.channels + c) * g.in_plane();
            T* dst = row + i * band;
            for (int64_t oh = b.r0; oh < b.r1; ++oh, dst += g.out_width) {
              const int64_t ih = oh * w.stride[0] - w.pad[0] + ki * w.dilate[0];
              if (ih < 0 || ih >= g.height) {
                std::fill(dst, dst + g.out_width, T(0));
                continue;
              }
              const T* s = src + ih * g.width + w_off;
              std::fill(dst, dst + r.lo, T(0));
              if (w.stride[1] == 1) {
                std::memcpy(dst + r.lo, s + r.lo, static_cast<size_t>(r.hi - r.lo) * sizeof(T));
              } else {
                for (int64_t ow = r.lo; ow < r.hi; ++ow) dst[ow] = s[ow * w.stride[1]];
              }
              std::fill(dst + r.hi, dst + g.out_width, T(0));
            }
          }
        }
      }
    }
  });
}

// The transpose of im2col: adds the columns of block b back into x.
template <typename T>
void col2im(const ConvGeom& g, const T* col, const Block& b, T* x) {
  const int64_t ld = b.columns(g), band = (b.r1 - b.r0) * g.out_width;
  const Window2d& w = g.win;
  // Each chunk of channels writes only its own input planes.
  parallel_for(g.channels, channel_grain(g, ld), [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      for (int64_t ki = 0; ki < w.kernel[0]; ++ki) {
        for (int64_t kj = 0; kj < w.kernel[1]; ++kj) {
          const T* row = col + ((c * w.kernel[0] + ki) * w.kernel[1] + kj) * ld;
          const int64_t w_off = kj * w.dilate[1] - w.pad[1];
          const ValidRange r = valid_range(g.out_width, g.width, w_off, w.stride[1]);
          for (int64_t i = 0; i < b.nb; ++i) {
            T* dst = x + ((b.n0 + i) * g.channels + c) * g.in_plane();
            const T* src = row + i * band;
            for (int64_t oh = b.r0; oh < b.r1; ++oh, src += g.out_width) {
              const int64_t ih = oh * w.stride[0] - w.pad[0] + ki * w.dilate[0];
              if (ih < 0 || ih >= g.height) continue;
              T* d = dst + ih * g.width + w_off;
              if (w.stride[1] == 1) {
                for (int64_t ow = r.lo; ow < r.hi; ++ow) d[ow] += src[ow];
              } else {
                for (int64_t ow = r.lo; ow < r.hi; ++ow) d[ow * w.stride[1]] += src[ow];
              }
            }
          }
        }
      }
    }
  });
}

}  // namespace

Window2d make_window(const WindowSpec& spec, const std::string& op) {
  Window2d w;
  const int nd = spec.kernel.ndim();
  if (nd != 1 && nd != 2)
    throw InputError(str(op, ": kernel ", spec.kernel.to_string(),
                         " must have 1 or 2 dimensions (1-D or 2-D; 3-D is not supported)"));
  w.ndim = nd;
  auto take = [&](const Shape& s, const char* name, int64_t fallback, int64_t min,
                  std::array<int64_t, 2>& out) {
    if (s.ndim() > 0 && s.ndim() != nd)
      throw InputError(str(op, ": ", name, " ", s.to_string(), " must have ", nd,
                           " dimension(s), like kernel ", spec.kernel.to_string()));
    for (int d = 0; d < nd; ++d) {
      const int64_t v = s.ndim() > 0 ? s[d] : fallback;
      if (v < min)
        throw InputError(str(op, ": ", name, " ", s.to_string(), " must be at least ", min));
      out[static_cast<size_t>(d + 2 - nd)] = v;
    }
  };
  take(spec.kernel, "kernel", 1, 1, w.kernel);
  take(spec.stride, "stride", 1, 1, w.stride);
  take(spec.dilate, "dilate", 1, 1, w.dilate);
  take(spec.pad, "pad", 0, 0, w.pad);
  return w;
}

namespace {
// Spatial dim d (0 = h, 1 = w of the 2-D view) of an N-C-spatial shape.
int64_t spatial(const Shape& s, const Window2d& w, int d) {
  if (w.ndim == 1 && d == 0) return 1;
  return s[d + w.ndim];
}
}  // namespace

ConvGeom conv_geom(const Window2d& win, int64_t groups, const Shape& image, int64_t channels,
                   const Shape& result, int64_t filters) {
  ConvGeom g;
  g.win = win;
  g.batch = image[0];
  g.channels = channels;
  g.height = spatial(image, win, 0);
  g.width = spatial(image, win, 1);
  g.filters = filters;
  g.out_height = spatial(result, win, 0);
  g.out_width = spatial(result, win, 1);
  g.groups = groups;
  return g;
}

DeconvPadAdj deconv_pad_adj(const Window2d& w, const Shape& adj, const Shape& target_shape,
                            const Shape& data) {
  DeconvPadAdj r;
  r.pad = w.pad;
  for (int d = 0; d < adj.ndim(); ++d) r.adj[static_cast<size_t>(d + 2 - w.ndim)] = adj[d];
  bool uses_target = false;
  for (int d = 0; d < target_shape.ndim(); ++d) uses_target |= target_shape[d] != 0;
  if (!uses_target) return r;
  for (int d = 0; d < w.ndim; ++d) {
    const size_t k = static_cast<size_t>(d + 2 - w.ndim);
    const int64_t size = data[2 + d];
    if (size < 0) continue;
    int64_t total = w.stride[k] * (size - 1) + w.dilated(static_cast<int>(k));
    if (total < target_shape[d])
      throw ShapeError(str("target_shape ", target_shape.to_string(),
                           " is too big for input 'data' ", data.to_string()));
    total -= target_shape[d];
    r.adj[k] = total % 2;
    r.pad[k] = (total + 1) / 2;
  }
  return r;
}

ConvGeom deconvolution_geom(Window2d win, const Shape& adj, const Shape& target_shape,
                            int64_t groups, int64_t num_filter, const Shape& data,
                            const Shape& out) {
  win.pad = deconv_pad_adj(win, adj, target_shape, data).pad;
  return conv_geom(win, groups, out, num_filter, data, data[1]);
}

size_t workspace_bytes(int64_t workspace_mb) {
  return static_cast<size_t>(std::max<int64_t>(workspace_mb, 1)) << 20;
}

template <typename T>
void add_bias(T* y, const T* bias, int64_t batch, int64_t filters, int64_t plane) {
  parallel_for(batch * filters, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(plane, 1)),
               [&](int64_t begin, int64_t end) {
                 for (int64_t r = begin; r < end; ++r) {
                   const T b = bias[r % filters];
                   T* row = y + r * plane;
                   for (int64_t p = 0; p < plane; ++p) row[p] += b;
                 }
               });
}

template <typename T>
void conv_forward(const ConvGeom& g, const T* x, const T* w, const T* bias, T* y, OpReq req,
                  const OpResources& res, size_t max_temp_bytes) {
  if (req == OpReq::kNull || g.batch == 0 || g.out_plane() == 0) return;
  const int64_t P = g.out_plane(), F = g.filters, Fg = F / g.groups, Kg = g.group_rows();
  const int64_t col_rows = g.channels * g.window_size();
  const Plan plan = make_plan(g, sizeof(T), max_temp_bytes, 0);
  T* scratch = static_cast<T*>(res.temp_space(plan.part_elems * plan.parts * sizeof(T)));
  const bool add = req == OpReq::kAdd;

  for_parts(g, plan, [&](int64_t part, int64_t first, int64_t last) {
    T* col = scratch + static_cast<size_t>(part) * plan.part_elems;
    for_blocks(g, plan, first, last, [&](const Block& b) {
      const int64_t ld = b.columns(g);
      im2col(g, x, b, col);
      if (b.nb == 1) {
        // A band of one image: the GEMM writes straight into y (row stride P).
        T* out = y + b.n0 * F * P + b.r0 * g.out_width;
        T beta = add ? T(1) : T(0);
        if (bias != nullptr) {
          // Start from the bias (never 0 * y: y may hold NaNs before a write).
          for (int64_t f = 0; f < F; ++f) {
            T* row = out + f * P;
            if (add) {
              for (int64_t p = 0; p < ld; ++p) row[p] += bias[f];
            } else {
              std::fill(row, row + ld, bias[f]);
            }
          }
          beta = T(1);
        }
        for (int64_t grp = 0; grp < g.groups; ++grp)
          gemm(false, false, Fg, ld, Kg, T(1), w + grp * Fg * Kg, Kg, col + grp * Kg * ld, ld, beta,
               out + grp * Fg * P, P);
        return;
      }
      // Several images: their outputs come out side by side in tmp (F x nb*P)
      // and are scattered into the (N, F, P) layout.
      T* tmp = col + col_rows * ld;
      for (int64_t grp = 0; grp < g.groups; ++grp)
        gemm(false, false, Fg, ld, Kg, T(1), w + grp * Fg * Kg, Kg, col + grp * Kg * ld, ld, T(0),
             tmp + grp * Fg * ld, ld);
      for (int64_t i = 0; i < b.nb; ++i) {
        for (int64_t f = 0; f < F; ++f) {
          const T* src = tmp + f * ld + i * P;
          T* dst = y + ((b.n0 + i) * F + f) * P;
          const T bf = bias != nullptr ? bias[f] : T(0);
          if (add) {
            for (int64_t p = 0; p < P; ++p) dst[p] += src[p] + bf;
          } else {
            for (int64_t p = 0; p < P; ++p) dst[p] = src[p] + bf;
          }
        }
      }
    });
  });
}

template <typename T>
void conv_backward(const ConvGeom& g, const T* x, const T* dy, const T* w, T* dx, OpReq dx_req,
                   T* dw, OpReq dw_req, const OpResources& res, size_t max_temp_bytes) {
  const bool want_dx = dx != nullptr && dx_req != OpReq::kNull;
  const bool want_dw = dw != nullptr && dw_req != OpReq::kNull;
  if (!want_dx && !want_dw) return;
  if (g.batch == 0 || g.out_plane() == 0) {  // nothing flows back
    if (want_dw && dw_req != OpReq::kAdd) std::fill(dw, dw + g.weight_size(), T(0));
    if (want_dx && dx_req != OpReq::kAdd)
      std::fill(dx, dx + g.batch * g.channels * g.in_plane(), T(0));
    return;
  }
  const int64_t P = g.out_plane(), F = g.filters, Fg = F / g.groups, Kg = g.group_rows();
  const int64_t col_rows = g.channels * g.window_size();
  const size_t wsize = static_cast<size_t>(g.weight_size());
  // With several parts each sums its own weight gradient; they are added in
  // part order at the end, so the result does not depend on timing.
  const Plan plan = make_plan(g, sizeof(T), max_temp_bytes, want_dw ? wsize : 0);
  T* scratch = static_cast<T*>(res.temp_space(plan.part_elems * plan.parts * sizeof(T)));
  const bool partials = want_dw && plan.parts > 1;

  for_parts(g, plan, [&](int64_t part, int64_t first, int64_t last) {
    // Layout of a part: [partial dw] [columns] [gathered dy].
    T* base = scratch + static_cast<size_t>(part) * plan.part_elems;
    T* dw_part = partials ? base : dw;
    T* col = partials ? base + wsize : base;
    T* gathered = col + col_rows * plan.images * plan.rows * g.out_width;
    bool first_block = true;
    for_blocks(g, plan, first, last, [&](const Block& b) {
      const int64_t ld = b.columns(g);
      // dy of the block as an (F x ld) matrix with row stride ld_dy.
      const T* dyb = dy + b.n0 * F * P + b.r0 * g.out_width;
      int64_t ld_dy = P;
      if (b.nb > 1) {
        for (int64_t i = 0; i < b.nb; ++i)
          for (int64_t f = 0; f < F; ++f)
            std::memcpy(gathered + f * ld + i * P, dy + ((b.n0 + i) * F + f) * P,
                        static_cast<size_t>(P) * sizeof(T));
        dyb = gathered;
        ld_dy = ld;
      }
      if (want_dw) {
        im2col(g, x, b, col);
        const T beta = first_block && (partials || dw_req != OpReq::kAdd) ? T(0) : T(1);
        for (int64_t grp = 0; grp < g.groups; ++grp)
          gemm(false, true, Fg, Kg, ld, T(1), dyb + grp * Fg * ld_dy, ld_dy, col + grp * Kg * ld,
               ld, beta, dw_part + grp * Fg * Kg, Kg);
      }
      if (want_dx) {
        for (int64_t grp = 0; grp < g.groups; ++grp)
          gemm(true, false, Kg, ld, Fg, T(1), w + grp * Fg * Kg, Kg, dyb + grp * Fg * ld_dy, ld_dy,
               T(0), col + grp * Kg * ld, ld);
        // The first band of an image starts its gradient from zero.
        if (dx_req != OpReq::kAdd && b.r0 == 0) {
          T* dx_images = dx + b.n0 * g.channels * g.in_plane();
          std::fill(dx_images, dx_images + b.nb * g.channels * g.in_plane(), T(0));
        }
        col2im(g, col, b, dx);
      }
      first_block = false;
    });
    // A part without images still owns a partial: make it zero.
    if (partials && first_block) std::fill(dw_part, dw_part + wsize, T(0));
  });

  if (partials) {
    const bool add = dw_req == OpReq::kAdd;
    parallel_for(static_cast<int64_t>(wsize), kParallelGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        T sum = add ? dw[i] : T(0);
        for (int64_t part = 0; part < plan.parts; ++part)
          sum += scratch[static_cast<size_t>(part) * plan.part_elems + static_cast<size_t>(i)];
        dw[i] = sum;
      }
    });
  }
}

template <typename T>
void bias_gradient(const T* dy, int64_t batch, int64_t filters, int64_t plane, T* db, OpReq req) {
  if (req == OpReq::kNull) return;
  parallel_for(filters, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, batch * plane)),
               [&](int64_t begin, int64_t end) {
                 for (int64_t f = begin; f < end; ++f) {
                   T sum = 0;
                   for (int64_t n = 0; n < batch; ++n) {
                     const T* row = dy + (n * filters + f) * plane;
                     for (int64_t p = 0; p < plane; ++p) sum += row[p];
                   }
                   assign(db + f, req, sum);
                 }
               });
}

#define MX_CONV_INSTANTIATE(T)                                                                 \
  template void add_bias<T>(T*, const T*, int64_t, int64_t, int64_t);                          \
  template void conv_forward<T>(const ConvGeom&, const T*, const T*, const T*, T*, OpReq,      \
                                const OpResources&, size_t);                                   \
  template void conv_backward<T>(const ConvGeom&, const T*, const T*, const T*, T*, OpReq, T*, \
                                 OpReq, const OpResources&, size_t);                           \
  template void bias_gradient<T>(const T*, int64_t, int64_t, int64_t, T*, OpReq);
MX_CONV_INSTANTIATE(float)
MX_CONV_INSTANTIATE(double)
#undef MX_CONV_INSTANTIATE

}  // namespace mx::op

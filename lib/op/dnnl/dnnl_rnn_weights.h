// Between MXNet's flat RNN parameter vector (op/nn/rnn_param.h) and
// oneDNN's plain RNN weight tensors, for one group of layers (RnnGroup):
//   weights_layer (L, D, G, H, C) ldgoi: MXNet's Wx blocks (G*H, C)
//   weights_iter (L, D, G, H, P) ldgoi: Wh (G*H, P)
//   weights_projection (L, D, P, H) ldoi: Whr (P, H), LSTMP only
//   bias (L, D, Gb, H) ldgo
// in oneDNN's gate order: LSTM i, f, c~, o is MXNet's; LBR-GRU u, r, o is
// MXNet's z, r, n, and its bias has a fourth gate, the h-side bias of the
// candidate (inside r * (Whn h + bhn)): [bxz+bhz, bxr+bhr, bxn, bhn].
// oneDNN has one bias per gate where MXNet has two (bx, bh) that the
// forward pass adds: both get that bias's gradient.
//
// Also the cache of what is derived from one content of the parameter
// array (a ContentStamp): each layout a primitive wants, made once.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "op/dnnl/dnnl_context.h"
#include "op/dnnl/dnnl_rnn.h"

namespace mx::op::dnnl_impl {

// Gates of oneDNN's bias: G, or 4 for LBR-GRU.
int64_t rnn_bias_gates(RnnMode mode);

// Elements of the group's plain tensors.
struct RnnWeightSizes {
  int64_t layer = 0, iter = 0, projection = 0, bias = 0;
};
RnnWeightSizes rnn_weight_sizes(const RnnGeometry& g, const RnnGroup& group, RnnMode mode);

// The group's plain tensors (projection null without one).
template <typename F>
struct RnnPlainWeights {
  F* layer;
  F* iter;
  F* projection;
  F* bias;
};

// Writes the group's parameters from `flat` into oneDNN's plain tensors.
void gather_rnn_weights(const RnnParam& p, const RnnGeometry& g, const RnnGroup& group,
                        const float* flat, const RnnPlainWeights<float>& out);

// Writes (add: adds) the group's gradients from oneDNN's plain tensors into
// MXNet's flat gradient vector.
void scatter_rnn_gradients(const RnnParam& p, const RnnGeometry& g, const RnnGroup& group,
                           const RnnPlainWeights<const float>& grads, float* dflat, bool add);

// A 64-byte-aligned buffer.
class AlignedBuffer {
 public:
  explicit AlignedBuffer(size_t bytes);
  std::byte* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  std::unique_ptr<std::byte[]> storage_;
  std::byte* data_;
  size_t size_;
};

// The buffer derived from content `stamp` under `key` (a layout), made by
// `fill` on the first request. A new content of the array drops what was
// derived from the old one (it is dead); the whole cache starts over past a
// bound in bytes (entries of arrays that are gone are never hit again).
std::shared_ptr<const AlignedBuffer> derived_from_content(
    const ContentStamp& stamp, const std::string& key, size_t bytes,
    const std::function<void(std::byte*)>& fill);

}  // namespace mx::op::dnnl_impl

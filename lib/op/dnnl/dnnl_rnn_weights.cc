#include "op/dnnl/dnnl_rnn_weights.h"

#include <atomic>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "base/parallel.h"

namespace mx::op::dnnl_impl {
namespace {

// MXNet's gate of oneDNN's gate q: GRU's u, r, o are MXNet's z, r, n.
int64_t mxnet_gate(RnnMode mode, int64_t q) {
  if (mode == RnnMode::kGru && q < 2) return 1 - q;
  return q;
}

// Blocks of `block` elements, one per (layer, direction, gate) of the
// group, between a flat position (`at(l, d)` + the MXNet gate's block) and
// oneDNN's plain tensor (consecutive blocks, gates in oneDNN's order).
template <typename At, typename Copy>
void for_gate_blocks(const RnnGeometry& g, const RnnGroup& group, RnnMode mode, int64_t gates,
                     int64_t block, At at, Copy copy) {
  const int64_t blocks = group.count * g.D * gates;
  parallel_for(blocks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      const int64_t q = b % gates, ld = b / gates;
      const int64_t l = group.first + ld / g.D, d = ld % g.D;
      const int64_t m = gates == 3 ? mxnet_gate(mode, q) : q;  // GRU's gates, not its projection
      copy(at(l, d) + m * block, b * block, block);
    }
  });
}

void store(float* dst, const float* src, int64_t n, bool add) {
  if (!add) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
    return;
  }
  for (int64_t k = 0; k < n; ++k) dst[k] += src[k];
}

}  // namespace

int64_t rnn_bias_gates(RnnMode mode) {
  switch (mode) {
    case RnnMode::kLstm: return 4;
    case RnnMode::kGru: return 4;  // LBR-GRU: u, r, o and the candidate's h-side bias
    default: return 1;
  }
}

RnnWeightSizes rnn_weight_sizes(const RnnGeometry& g, const RnnGroup& group, RnnMode mode) {
  const int64_t ld = group.count * g.D;
  RnnWeightSizes s;
  s.layer = ld * g.G * g.H * group.input;
  s.iter = ld * g.G * g.H * g.P;
  s.projection = g.projection ? ld * g.P * g.H : 0;
  s.bias = ld * rnn_bias_gates(mode) * g.H;
  return s;
}

void gather_rnn_weights(const RnnParam& p, const RnnGeometry& g, const RnnGroup& group,
                        const float* flat, const RnnPlainWeights<float>& out) {
  const RnnMode mode = p.mode;
  auto copy_to = [&](float* dst) {
    return [flat, dst](int64_t from, int64_t to, int64_t n) {
      std::memcpy(dst + to, flat + from, static_cast<size_t>(n) * sizeof(float));
    };
  };
  for_gate_blocks(
      g, group, mode, g.G, g.H * group.input, [&](int64_t l, int64_t d) { return g.wx(l, d); },
      copy_to(out.layer));
  for_gate_blocks(
      g, group, mode, g.G, g.H * g.P, [&](int64_t l, int64_t d) { return g.wh(l, d); },
      copy_to(out.iter));
  if (out.projection != nullptr)
    for_gate_blocks(
        g, group, mode, 1, g.P * g.H, [&](int64_t l, int64_t d) { return g.whr(l, d); },
        copy_to(out.projection));
  // One bias per gate: bx + bh, except LBR-GRU's candidate, whose h-side
  // bias is a gate of its own.
  const int64_t gb = rnn_bias_gates(mode), H = g.H;
  for (int64_t ld = 0; ld < group.count * g.D; ++ld) {
    const int64_t l = group.first + ld / g.D, d = ld % g.D;
    const float* bx = flat + g.bx(l, d);
    const float* bh = flat + g.bh(l, d);
    float* b = out.bias + ld * gb * H;
    for (int64_t q = 0; q < g.G; ++q) {
      const int64_t m = mxnet_gate(mode, q) * H;
      const bool split = mode == RnnMode::kGru && q == 2;
      for (int64_t j = 0; j < H; ++j) b[q * H + j] = bx[m + j] + (split ? 0.0f : bh[m + j]);
    }
    if (mode == RnnMode::kGru)
      for (int64_t j = 0; j < H; ++j) b[3 * H + j] = bh[2 * H + j];
  }
}

void scatter_rnn_gradients(const RnnParam& p, const RnnGeometry& g, const RnnGroup& group,
                           const RnnPlainWeights<const float>& grads, float* dflat, bool add) {
  const RnnMode mode = p.mode;
  auto copy_from = [&](const float* src) {
    return [src, dflat, add](int64_t to, int64_t from, int64_t n) {
      store(dflat + to, src + from, n, add);
    };
  };
  for_gate_blocks(
      g, group, mode, g.G, g.H * group.input, [&](int64_t l, int64_t d) { return g.wx(l, d); },
      copy_from(grads.layer));
  for_gate_blocks(
      g, group, mode, g.G, g.H * g.P, [&](int64_t l, int64_t d) { return g.wh(l, d); },
      copy_from(grads.iter));
  if (grads.projection != nullptr)
    for_gate_blocks(
        g, group, mode, 1, g.P * g.H, [&](int64_t l, int64_t d) { return g.whr(l, d); },
        copy_from(grads.projection));
  const int64_t gb = rnn_bias_gates(mode), H = g.H;
  for (int64_t ld = 0; ld < group.count * g.D; ++ld) {
    const int64_t l = group.first + ld / g.D, d = ld % g.D;
    float* dbx = dflat + g.bx(l, d);
    float* dbh = dflat + g.bh(l, d);
    const float* db = grads.bias + ld * gb * H;
    for (int64_t q = 0; q < g.G; ++q) {
      const int64_t m = mxnet_gate(mode, q) * H;
      store(dbx + m, db + q * H, H, add);
      // GRU's candidate: bhn is scaled by r, its gradient is the fourth gate's.
      store(dbh + m, db + (mode == RnnMode::kGru && q == 2 ? 3 : q) * H, H, add);
    }
  }
}

AlignedBuffer::AlignedBuffer(size_t bytes)
    : storage_(new std::byte[bytes + 64]), data_(nullptr), size_(bytes) {
  const auto address = reinterpret_cast<uintptr_t>(storage_.get());
  data_ = storage_.get() + ((64 - address % 64) % 64);
}

namespace {

// Per variable uid: the content (version) its entries were derived from,
// and one buffer per key.
class DerivedCache {
 public:
  static DerivedCache& get() {
    static auto* cache = new DerivedCache;  // never destroyed: kernels may run at exit
    return *cache;
  }

  std::shared_ptr<const AlignedBuffer> find_or_make(const ContentStamp& stamp,
                                                    const std::string& key, size_t bytes,
                                                    const std::function<void(std::byte*)>& fill) {
    {
      std::lock_guard lock(mutex_);
      auto found = entries_.find(stamp.var_uid);
      if (found != entries_.end() && found->second.version == stamp.version) {
        auto kept = found->second.buffers.find(key);
        if (kept != found->second.buffers.end()) return kept->second;
      }
    }
    // Made outside the lock; two threads may both make it, one result is kept.
    auto buffer = std::make_shared<AlignedBuffer>(bytes);
    fill(buffer->data());
    std::lock_guard lock(mutex_);
    made_.fetch_add(1, std::memory_order_relaxed);
    Entry& entry = entries_[stamp.var_uid];
    if (entry.version != stamp.version) {  // the array was written: the old content is dead
      for (const auto& [k, b] : entry.buffers) bytes_ -= b->size();
      entry.buffers.clear();
      entry.version = stamp.version;
    }
    if (bytes_ + bytes > kMaxBytes) {
      entries_.clear();
      bytes_ = 0;
    }
    auto& slot = entries_[stamp.var_uid];
    slot.version = stamp.version;
    if (auto old = slot.buffers.find(key); old != slot.buffers.end()) bytes_ -= old->second->size();
    slot.buffers[key] = buffer;
    bytes_ += bytes;
    return buffer;
  }

  uint64_t made() const { return made_.load(std::memory_order_relaxed); }

 private:
  static constexpr size_t kMaxBytes = size_t{1} << 30;
  struct Entry {
    uint64_t version = 0;
    std::unordered_map<std::string, std::shared_ptr<const AlignedBuffer>> buffers;
  };
  std::mutex mutex_;
  std::unordered_map<uint64_t, Entry> entries_;
  size_t bytes_ = 0;
  std::atomic<uint64_t> made_{0};
};

}  // namespace

std::shared_ptr<const AlignedBuffer> derived_from_content(
    const ContentStamp& stamp, const std::string& key, size_t bytes,
    const std::function<void(std::byte*)>& fill) {
  return DerivedCache::get().find_or_make(stamp, key, bytes, fill);
}

uint64_t rnn_weight_packs_made() { return DerivedCache::get().made(); }

}  // namespace mx::op::dnnl_impl

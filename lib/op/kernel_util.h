// Loops shared by the CPU kernels: element-wise maps over contiguous memory,
// split over the thread budget when large enough to pay for it.
#pragma once

#include <algorithm>
#include <cstdint>

#include "base/bfloat16.h"
#include "base/parallel.h"
#include "op/tensor_ref.h"
#include "op/vmath/vmath.h"

namespace mx::op {

// Below this many elements a loop runs on one thread.
inline constexpr int64_t kParallelGrain = 32768;

// out[i] (req) f(i) for i in [0, n).
template <typename T, typename F>
void map_index(T* out, int64_t n, OpReq req, F f) {
  if (req == OpReq::kNull) return;
  parallel_for(n, kParallelGrain, [&](int64_t begin, int64_t end) {
    // A local copy: the values f captured become loop invariants, where
    // stores through out might otherwise alias them (no vectorising then).
    const F k = f;
    if (req == OpReq::kAdd) {
      for (int64_t i = begin; i < end; ++i) out[i] += k(i);
    } else {
      for (int64_t i = begin; i < end; ++i) out[i] = k(i);
    }
  });
}

// f(i) for i in [0, n) over the thread budget: the CPU run of a per-element
// functor of a *_kernels.h header (the code the GPU launches).
template <typename F>
void parallel_elements(int64_t n, const F& f) {
  parallel_for(n, kParallelGrain, [&](int64_t begin, int64_t end) {
    const F k = f;  // a local copy: its fields become loop invariants
    for (int64_t i = begin; i < end; ++i) k(i);
  });
}

// Elements per call of a map_blocks function: small enough for a buffer on
// the stack.
inline constexpr int64_t kMapBlock = 1024;

// out[begin, begin + len) (req) what f(begin, len, dst) writes to dst[0, len),
// for blocks of at most kMapBlock elements covering [0, n). With req kAdd,
// dst is a scratch buffer; otherwise it is out + begin, which may be an
// input of f too (in place), so f must read an element before writing it.
template <typename T, typename F>
void map_blocks(T* out, int64_t n, OpReq req, F f) {
  if (req == OpReq::kNull) return;
  parallel_for(n, kParallelGrain, [&](int64_t begin, int64_t end) {
    const F k = f;  // a local copy, as in map_index
    T scratch[kMapBlock];
    for (int64_t b = begin; b < end; b += kMapBlock) {
      const int64_t len = std::min(kMapBlock, end - b);
      if (req != OpReq::kAdd) {
        k(b, len, out + b);
        continue;
      }
      k(b, len, scratch);
      for (int64_t i = 0; i < len; ++i) out[b + i] += scratch[i];
    }
  });
}

// bfloat16 blocks to float and back (vectorised; bf16_t is its bits).
static_assert(sizeof(bf16_t) == sizeof(uint16_t));
inline void widen_block(const bf16_t* in, float* out, int64_t n) {
  vmath::widen_bf16(reinterpret_cast<const uint16_t*>(in), out, n);
}
inline void round_block(const float* in, bf16_t* out, int64_t n) {
  vmath::round_bf16(in, reinterpret_cast<uint16_t*>(out), n);
}

// map_blocks onto bfloat16 storage: f writes float values into a scratch
// block, each then rounded into out (or added to it) once. f may read out
// (in place): a block is stored only after f has run on it.
template <typename F>
void map_blocks_bf16(bf16_t* out, int64_t n, OpReq req, F f) {
  if (req == OpReq::kNull) return;
  parallel_for(n, kParallelGrain, [&](int64_t begin, int64_t end) {
    float scratch[kMapBlock];
    float old[kMapBlock];
    for (int64_t b = begin; b < end; b += kMapBlock) {
      const int64_t len = std::min(kMapBlock, end - b);
      f(b, len, scratch);
      if (req == OpReq::kAdd) {
        widen_block(out + b, old, len);
        for (int64_t i = 0; i < len; ++i) scratch[i] += old[i];
      }
      round_block(scratch, out + b, len);
    }
  });
}

}  // namespace mx::op

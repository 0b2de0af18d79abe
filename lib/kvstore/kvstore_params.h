// The kvstore settings as typed parameter structs, so a config section
// parses with the project's usual messages (unknown names with suggestions,
// ranges, allowed values). join_job (coordinator.h) makes the job they name.
//
//   kvstore: {type: dist_sync, bigarray_bound: 1000000, pack_threshold: 16384,
//             heartbeat_interval: 1, heartbeat_timeout: 10, gradient_dtype: bfloat16}
//   gradient_compression: {type: 2bit, threshold: 0.5}
#pragma once

#include <cstdint>

#include "base/param.h"
#include "kvstore/gradient_compression.h"

namespace mx::kvstore {

enum class StoreType { kLocal, kDevice, kDistSync, kDistAsync };
const char* store_type_name(StoreType type);

struct KVStoreParams : Params<KVStoreParams> {
  StoreType type = StoreType::kLocal;
  int64_t bigarray_bound = 1000000;
  // Keys of at most this many bytes pushed or pulled together travel as one
  // message per server (0: each key alone).
  int64_t pack_threshold = 16384;
  double heartbeat_interval = 1.0;
  double heartbeat_timeout = 10.0;
  // Push each gradient as soon as the backward pass has made it, and pull
  // while the next forward pass starts (false: communicate only after the
  // whole backward pass and wait for it; for measuring what overlap hides).
  bool overlap = true;
  // The type gradients travel in to the servers (dist stores): bfloat16 or
  // float16 halve the bytes; servers widen them and sum in float32.
  DType gradient_dtype = DType::kFloat32;
  static void declare(ParamDecl<KVStoreParams>& d);
  bool dist() const { return type == StoreType::kDistSync || type == StoreType::kDistAsync; }
};

enum class CompressionType { kNone, k2Bit };

struct CompressionParams : Params<CompressionParams> {
  CompressionType type = CompressionType::kNone;
  double threshold = 0.5;
  static void declare(ParamDecl<CompressionParams>& d);
  CompressionSpec spec() const;
};

}  // namespace mx::kvstore

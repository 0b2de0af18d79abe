#include "kvstore/kvstore_params.h"

namespace mx::kvstore {

const char* store_type_name(StoreType type) {
  switch (type) {
    case StoreType::kLocal: return "local";
    case StoreType::kDevice: return "device";
    case StoreType::kDistSync: return "dist_sync";
    case StoreType::kDistAsync: return "dist_async";
  }
  return "?";
}

void KVStoreParams::declare(ParamDecl<KVStoreParams>& d) {
  d.field("type", &KVStoreParams::type)
      .set_default(StoreType::kLocal)
      .add_enum("local", StoreType::kLocal)
      .add_enum("device", StoreType::kDevice)
      .add_enum("dist_sync", StoreType::kDistSync)
      .add_enum("dist_async", StoreType::kDistAsync)
      .describe(
          "where gradients are summed and the optimizer runs (dist_*: parameter servers "
          "started with mx-serve-ps in the same mpirun)");
  d.field("bigarray_bound", &KVStoreParams::bigarray_bound)
      .set_default(1000000)
      .set_lower_bound(1)
      .describe("arrays with this many elements or more are split over all servers");
  d.field("pack_threshold", &KVStoreParams::pack_threshold)
      .set_default(16384)
      .set_range(0, 16 << 20)
      .describe(
          "dist stores: keys of at most this many bytes pushed or pulled together go to their "
          "server as one message (0: every key alone)");
  d.field("heartbeat_interval", &KVStoreParams::heartbeat_interval)
      .set_default(1.0)
      .set_lower_bound(0.01)
      .describe("seconds between the heartbeats that ranks send each other");
  d.field("heartbeat_timeout", &KVStoreParams::heartbeat_timeout)
      .set_default(10.0)
      .set_lower_bound(0.1)
      .describe("seconds of silence after which a rank counts as stopped or hung and the job ends");
  d.field("overlap", &KVStoreParams::overlap)
      .set_default(true)
      .describe(
          "overlap communication with computation: push each gradient as soon as it is made, "
          "pull while the next forward pass starts (false: only after the whole backward pass, "
          "and wait for the pulls)");
  d.field("gradient_dtype", &KVStoreParams::gradient_dtype)
      .set_default(DType::kFloat32)
      .describe(
          "dist stores: the type gradients travel in to the servers: float32, bfloat16 or float16 "
          "(half the bytes, rounded to nearest even); the servers sum and update in float32");
}

void CompressionParams::declare(ParamDecl<CompressionParams>& d) {
  d.field("type", &CompressionParams::type)
      .set_default(CompressionType::kNone)
      .add_enum("none", CompressionType::kNone)
      .add_enum("2bit", CompressionType::k2Bit)
      .describe("gradient compression of pushes to the servers (MXNet 1.x's 2-bit scheme)");
  d.field("threshold", &CompressionParams::threshold)
      .set_default(0.5)
      .set_lower_bound(1e-12)
      .describe("2bit: values are quantized to -threshold, 0 or +threshold");
}

CompressionSpec CompressionParams::spec() const {
  return {type == CompressionType::k2Bit ? "2bit" : "none", static_cast<float>(threshold)};
}

}  // namespace mx::kvstore

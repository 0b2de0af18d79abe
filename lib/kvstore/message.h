// What workers and servers send each other. Every message is a fixed-size
// header (tag kHeaderTag) optionally followed by a payload (tag kPayloadTag)
// from the same sender; MPI keeps messages of one sender and tag in order,
// so a receiver that posts a payload receive when it reads the header gets
// the right payload. Data payloads go straight from and into the arrays.
#pragma once

#include <cstdint>
#include <string>

namespace mx::kvstore {

// Raised whenever a message changes meaning; ranks compare it at start-up
// (2: packed messages; 3: pushes narrowed to 16 bits).
inline constexpr int kProtocolVersion = 3;

inline constexpr int kHeaderTag = 7301;
inline constexpr int kPayloadTag = 7302;

enum class MsgType : int32_t {
  kInit = 1,  // worker -> server: a part's initial value (payload: values)
  kPush,      // worker -> server: a part's gradient (payload: values, 2-bit codes or 16-bit values)
  kPull,      // worker -> server: asks for a part's value
  kSetOptimizer,  // worker -> server: payload: serialize_optimizer's text
  kSaveStates,    // worker -> server: payload: path prefix
  kLoadStates,    // worker -> server: payload: path prefix
  kBye,           // worker -> server: this worker is done
  kReply,         // server -> worker: request `id` done (pull: payload = values)
  kError,         // server -> worker: request `id` failed (payload: message)
  kHeartbeat,     // both ways, every heartbeat interval
  kPacked,        // both ways: several init/push/pull requests or their replies (packing.h)
};

const char* msg_type_name(MsgType type);

struct Header {
  MsgType type = MsgType::kHeartbeat;
  int32_t key = -1;
  int32_t dtype = 0;       // DType flag of the values
  int32_t compressed = 0;  // a push's PushEncoding (push_encoding.h): 0 values, 1 2-bit, 2-3 16-bit
  int64_t id = 0;          // request id, chosen by the worker, echoed in the reply
  int64_t offset = 0;      // first element of the part within the key
  int64_t count = 0;       // elements of the part
  int64_t total = 0;       // elements of the whole key
  int64_t bytes = 0;       // payload bytes (0: no payload)
  double threshold = 0;    // 2-bit compression threshold
};

// docs/distributed.md ("Messages") describes this layout.
static_assert(sizeof(Header) == 64, "the header's wire layout changed: raise kProtocolVersion");

// Which part of a key a message is about: (key, offset) is unique per server.
struct PartId {
  int32_t key = -1;
  int64_t offset = 0;
  auto operator<=>(const PartId&) const = default;
};

}  // namespace mx::kvstore

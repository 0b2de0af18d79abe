#include "kvstore/message.h"

namespace mx::kvstore {

const char* msg_type_name(MsgType type) {
  switch (type) {
    case MsgType::kInit: return "init";
    case MsgType::kPush: return "push";
    case MsgType::kPull: return "pull";
    case MsgType::kSetOptimizer: return "set-optimizer";
    case MsgType::kSaveStates: return "save-states";
    case MsgType::kLoadStates: return "load-states";
    case MsgType::kBye: return "bye";
    case MsgType::kReply: return "reply";
    case MsgType::kError: return "error";
    case MsgType::kHeartbeat: return "heartbeat";
    case MsgType::kPacked: return "packed";
  }
  return "unknown";
}

}  // namespace mx::kvstore

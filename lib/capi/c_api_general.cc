// The C API's general functions (include/mx/c_api.h).
#include "capi/c_api_error.h"
#include "capi/c_api_util.h"
#include "engine/engine.h"
#include "mx/c_api.h"
#include "op/resources.h"

using namespace mx::capi;

int MXGetVersion(int* out) {
  return guarded("MXGetVersion", [&] {
    require(out != nullptr, "out is NULL");
    *out = 10901;  // the MXNet release whose API and formats mx follows
  });
}

int MXRandomSeed(int seed) {
  return guarded("MXRandomSeed", [&] {
    mx::op::ResourceManager::get().seed(static_cast<uint64_t>(static_cast<uint32_t>(seed)));
  });
}

int MXNotifyShutdown(void) {
  return guarded("MXNotifyShutdown", [] { mx::Engine::get().wait_all(); });
}

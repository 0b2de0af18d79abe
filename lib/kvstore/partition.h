// Where a key's values live on the servers (MXNet 1.x's rule): an array of
// fewer elements than the big-array bound goes whole to one server chosen by
// a hash of the key; a bigger one is cut into one contiguous part per server,
// part i holding round(n/S*(i+1)) - round(n/S*i) elements.
#pragma once

#include <cstdint>
#include <vector>

namespace mx::kvstore {

// MXNet's MXNET_KVSTORE_BIGARRAY_BOUND default.
inline constexpr int64_t kDefaultBigArrayBound = 1000000;

struct KeyPart {
  int server = 0;      // server index (0 .. num_servers-1)
  int64_t offset = 0;  // first element of the part
  int64_t count = 0;   // elements in the part
};

// The server that holds a whole key: (key * 9973) % num_servers.
int server_for_key(int key, int num_servers);

// The parts of a key of `size` elements; empty parts are left out, so the
// parts cover [0, size) in order.
std::vector<KeyPart> partition_key(int key, int64_t size, int num_servers, int64_t bigarray_bound);

}  // namespace mx::kvstore

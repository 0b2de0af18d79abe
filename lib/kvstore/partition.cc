#include "kvstore/partition.h"

#include <cmath>

#include "base/error.h"

namespace mx::kvstore {

int server_for_key(int key, int num_servers) {
  MX_CHECK(num_servers > 0 && key >= 0);
  return static_cast<int>((static_cast<int64_t>(key) * 9973) % num_servers);
}

std::vector<KeyPart> partition_key(int key, int64_t size, int num_servers, int64_t bigarray_bound) {
  MX_CHECK(num_servers > 0 && size >= 0);
  if (size < bigarray_bound || num_servers == 1)
    return {KeyPart{server_for_key(key, num_servers), 0, size}};
  std::vector<KeyPart> parts;
  const double per_server = static_cast<double>(size) / num_servers;
  for (int i = 0; i < num_servers; ++i) {
    const auto begin = static_cast<int64_t>(std::llround(per_server * i));
    const auto end = static_cast<int64_t>(std::llround(per_server * (i + 1)));
    if (end > begin) parts.push_back(KeyPart{i, begin, end - begin});
  }
  return parts;
}

}  // namespace mx::kvstore

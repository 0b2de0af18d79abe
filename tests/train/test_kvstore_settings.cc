// The kvstore keys of a training config: a type or a mapping, overrides,
// and the errors for bad values.
#include <doctest/doctest.h>

#include "base/error.h"
#include "error_text.h"
#include "train/train_settings.h"

using namespace mx;
using namespace mx::train;
using kvstore::CompressionType;
using kvstore::StoreType;

namespace {

TrainSettings settings(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  return parse_train_settings(Config::from_string(yaml, "cfg.yaml", overrides));
}

std::string error_of(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  return test::error_text([&] { settings(yaml, overrides); });
}

}  // namespace

TEST_CASE("kvstore is local by default, a type, or a mapping with settings") {
  CHECK(settings("train: {epochs: 1}\n").kvstore.type == StoreType::kLocal);
  CHECK(settings("kvstore: dist_sync\n").kvstore.type == StoreType::kDistSync);
  CHECK(settings("kvstore: dist_sync\n").kvstore.overlap);
  const TrainSettings s = settings(
      "kvstore:\n  type: dist_async\n  bigarray_bound: 1000\n  heartbeat_interval: 0.5\n"
      "  heartbeat_timeout: 3\n  overlap: false\n  gradient_compression: {type: 2bit, threshold: "
      "0.25}\n");
  CHECK(s.kvstore.type == StoreType::kDistAsync);
  CHECK(s.kvstore.bigarray_bound == 1000);
  CHECK(s.kvstore.heartbeat_interval == 0.5);
  CHECK(s.kvstore.heartbeat_timeout == 3);
  CHECK_FALSE(s.kvstore.overlap);
  CHECK(s.compression.type == CompressionType::k2Bit);
  CHECK(s.compression.threshold == 0.25);
}

TEST_CASE("kvstore=TYPE on the command line replaces the mapping's type only") {
  const TrainSettings s =
      settings("kvstore: {type: dist_async, bigarray_bound: 64}\n", {"kvstore=dist_sync"});
  CHECK(s.kvstore.type == StoreType::kDistSync);
  CHECK(s.kvstore.bigarray_bound == 64);
}

TEST_CASE("bad kvstore settings name the place and the value") {
  const std::string bad_type = error_of("kvstore: dist\n");
  CHECK(bad_type.find("cfg.yaml:1") != std::string::npos);
  CHECK(bad_type.find("dist_sync") != std::string::npos);  // the allowed values
  CHECK(error_of("kvstore: {type: dist_sync, bigarray_bound: 0}\n").find("bigarray_bound") !=
        std::string::npos);
  CHECK(error_of("kvstore: {type: dist_sync, heartbeat_interval: 5, heartbeat_timeout: 2}\n")
            .find("must be longer than heartbeat_interval") != std::string::npos);
  CHECK(error_of("kvstore: {type: dist_sync, heartbeats: 2}\n").find("kvstore.heartbeats") !=
        std::string::npos);
  CHECK(error_of("kvstore: {type: dist_sync, gradient_compression: {type: 3bit}}\n").find("3bit") !=
        std::string::npos);
  CHECK(error_of("kvstore: {type: local, gradient_compression: {type: 2bit}}\n")
            .find("needs kvstore dist_sync or dist_async") != std::string::npos);
}

TEST_CASE("kvstore.gradient_dtype: bfloat16 or float16 pushes to servers, refused elsewhere") {
  CHECK(settings("kvstore: dist_sync\n").kvstore.gradient_dtype == DType::kFloat32);
  CHECK(settings("kvstore: {type: dist_sync, gradient_dtype: bfloat16}\n").kvstore.gradient_dtype ==
        DType::kBFloat16);
  CHECK(settings("kvstore: {type: dist_async}\n", {"kvstore.gradient_dtype=float16"})
            .kvstore.gradient_dtype == DType::kFloat16);
  CHECK(error_of("kvstore: {type: dist_sync, gradient_dtype: int8}\n") ==
        "cfg.yaml:1:44: kvstore.gradient_dtype must be float32, bfloat16 or float16, not int8");
  CHECK(error_of("kvstore: {type: local, gradient_dtype: bfloat16}\n")
            .find("kvstore.gradient_dtype applies to pushes to servers") != std::string::npos);
  CHECK(error_of("kvstore: {type: dist_sync, gradient_dtype: bfloat16, gradient_compression: "
                 "{type: 2bit}}\n")
            .find("do not combine") != std::string::npos);
}

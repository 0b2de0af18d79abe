#include "train/train_settings.h"

#include <algorithm>

#include "base/error.h"
#include "base/strings.h"
#include "train/device_setup.h"

namespace mx::train {
namespace {

const std::vector<std::string>& allowed_keys() {
  static const std::vector<std::string> keys = {"network",
                                                "symbol",
                                                "data.train.*",
                                                "data.val.*",
                                                "optimizer.*",
                                                "lr_scheduler.*",
                                                "initializer.*",
                                                "kvstore",
                                                "kvstore.type",
                                                "kvstore.bigarray_bound",
                                                "kvstore.pack_threshold",
                                                "kvstore.heartbeat_interval",
                                                "kvstore.heartbeat_timeout",
                                                "kvstore.overlap",
                                                "kvstore.gradient_dtype",
                                                "kvstore.gradient_compression.*",
                                                "train.epochs",
                                                "train.batch_size",
                                                "train.seed",
                                                "train.metrics",
                                                "train.devices",
                                                "train.checkpoint_every",
                                                "train.keep_checkpoints",
                                                "train.log_interval",
                                                "train.run_dir",
                                                "train.prefix",
                                                "train.mirror",
                                                "train.precision",
                                                "train.pretrained",
                                                "train.label_name",
                                                "train.data_name"};
  return keys;
}

graph::MirrorPolicy parse_mirror(const std::string& text, const std::string& origin) {
  if (text == "none" || text == "false" || text == "False") return graph::MirrorPolicy::kNone;
  if (text == "cheap" || text == "true" || text == "True") return graph::MirrorPolicy::kCheap;
  if (text == "all") return graph::MirrorPolicy::kAll;
  throw InputError(origin + ": train.mirror must be none, cheap or all, not '" + text + "'");
}

std::vector<Context> parse_devices(const Config& c) {
  std::vector<Context> devices;
  for (const auto& d : c.get_list("train.devices", {"cpu"})) {
    try {
      devices.push_back(Context::parse(d));
    } catch (const InputError& e) {
      throw InputError(c.origin("train.devices") + ": " + e.what());
    }
  }
  if (devices.empty()) throw InputError(c.origin("train.devices") + ": give at least one device");
  check_devices(devices, c.origin("train.devices"));
  return devices;
}

// `kvstore: TYPE` or `kvstore: {type: TYPE, ...}`; a `kvstore=TYPE` override
// replaces the mapping's type.
void parse_kvstore(const Config& c, TrainSettings& s) {
  auto values = c.section("kvstore");
  std::string where = c.origin("kvstore.type");
  if (c.has("kvstore")) {
    if (!c.at("kvstore").value.IsScalar())
      throw InputError(c.origin("kvstore") +
                       ": kvstore must be a type (local, device, dist_sync, dist_async) or a "
                       "mapping with 'type'");
    values["type"] = c.get_string("kvstore", "local");
    where = c.origin("kvstore");
  }
  for (const auto& [key, v] : values)
    if (key != "type" && c.has("kvstore." + key)) where = c.origin("kvstore." + key);
  try {
    s.kvstore = kvstore::KVStoreParams::from_strings(values, "kvstore");
    s.compression = kvstore::CompressionParams::from_strings(
        c.section("kvstore.gradient_compression"), "kvstore.gradient_compression");
  } catch (const InputError& e) {
    throw InputError(where + ": " + e.what());
  }
  if (s.kvstore.dist() && !(s.kvstore.heartbeat_timeout > s.kvstore.heartbeat_interval))
    throw InputError(str(where, ": kvstore.heartbeat_timeout (", s.kvstore.heartbeat_timeout,
                         " s) must be longer than heartbeat_interval (",
                         s.kvstore.heartbeat_interval, " s)"));
  if (s.compression.type != kvstore::CompressionType::kNone && !s.kvstore.dist())
    throw InputError(c.origin("kvstore.gradient_compression.type") +
                     ": gradient compression applies to pushes to servers: it needs kvstore "
                     "dist_sync or dist_async");
  if (s.kvstore.gradient_dtype != DType::kFloat32) {
    const std::string at = c.origin("kvstore.gradient_dtype");
    if (s.kvstore.gradient_dtype != DType::kBFloat16 && s.kvstore.gradient_dtype != DType::kFloat16)
      throw InputError(str(at,
                           ": kvstore.gradient_dtype must be float32, bfloat16 or float16, not ",
                           dtype_name(s.kvstore.gradient_dtype)));
    if (!s.kvstore.dist())
      throw InputError(at +
                       ": kvstore.gradient_dtype applies to pushes to servers: it needs kvstore "
                       "dist_sync or dist_async");
    if (s.compression.type != kvstore::CompressionType::kNone)
      throw InputError(at +
                       ": kvstore.gradient_dtype and 2-bit gradient_compression do not "
                       "combine; choose one");
  }
}

}  // namespace

TrainSettings parse_train_settings(const Config& c) {
  return parse_train_settings(c, detect_cpu_features());
}

TrainSettings parse_train_settings(const Config& c, const CpuFeatures& cpu) {
  std::vector<std::string> keys = allowed_keys();
  for (const auto& k : stop_setting_keys()) keys.push_back(k);
  for (const auto& k : loss_scale_keys()) keys.push_back(k);
  c.check_keys(keys);
  TrainSettings s;
  s.epochs = static_cast<int>(c.get_int("train.epochs", 1));
  if (s.epochs < 1)
    throw InputError(c.origin("train.epochs") + ": train.epochs must be at least 1");
  s.batch_size = static_cast<int>(c.get_int("train.batch_size", 64));
  if (s.batch_size < 1)
    throw InputError(c.origin("train.batch_size") + ": train.batch_size must be at least 1");
  s.seed = static_cast<uint64_t>(c.get_int("train.seed", 0));
  s.log_interval = std::max<int>(1, static_cast<int>(c.get_int("train.log_interval", 50)));
  s.checkpoint_every = static_cast<int>(c.get_int("train.checkpoint_every", 1));
  s.keep_checkpoints = static_cast<int>(c.get_int("train.keep_checkpoints", 3));
  s.metric_names = c.get_list("train.metrics", {"acc", "ce"});
  s.prefix_name = c.get_string("train.prefix", "model");
  s.mirror = parse_mirror(c.get_string("train.mirror", "none"), c.origin("train.mirror"));
  s.devices = parse_devices(c);
  s.ctx = s.devices[0];
  s.precision = parse_train_precision(c.get_string("train.precision", "float32"),
                                      c.origin("train.precision"));
  check_precision_supported(s.precision, s.devices, cpu, c.origin("train.precision"));
  parse_kvstore(c, s);
  s.loss_scale = parse_loss_scale(c, s.precision, s.kvstore.dist());
  if (s.devices.size() > 1 && s.batch_size % static_cast<int>(s.devices.size()) != 0)
    throw InputError(str(c.origin("train.batch_size"), ": train.batch_size ", s.batch_size,
                         " does not split evenly over the ", s.devices.size(), " devices"));
  s.data_name = c.get_string("train.data_name", "data");
  s.label_name = c.get_string("train.label_name", "");
  s.stop = parse_stop_settings(c, s.metric_names);
  if (c.has("optimizer.clip_global_norm")) {
    const std::string where = c.origin("optimizer.clip_global_norm");
    const double bound = c.get_double("optimizer.clip_global_norm", 0.0);
    if (!(bound > 0))
      throw InputError(where + ": optimizer.clip_global_norm must be a positive number");
    // The servers sum the workers' gradients: no worker sees the batch's norm.
    if (s.kvstore.dist())
      throw InputError(where +
                       ": optimizer.clip_global_norm needs the whole batch's gradient, which a "
                       "dist store only sums on the servers; use optimizer.clip_gradient there");
    s.clip_global_norm = bound;
  }
  return s;
}

void resolve_inputs(const graph::Symbol& network, TrainSettings& s) {
  const auto args = network.list_arguments();
  if (std::find(args.begin(), args.end(), s.data_name) == args.end())
    throw InputError(str("the network has no input '", s.data_name,
                         "' (its arguments: ", join(args, ", "), ")"));
  if (s.label_name.empty())
    for (const auto& a : args)
      if (a.size() > 6 && a.compare(a.size() - 6, 6, "_label") == 0) s.label_name = a;
  if (s.label_name.empty())
    throw InputError(
        "the network has no label input (an argument named *_label, made by an output layer such "
        "as SoftmaxOutput); end the network with a loss layer");
}

}  // namespace mx::train

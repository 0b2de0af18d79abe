#include "base/runtime_config.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "base/error.h"
#include "base/strings.h"

namespace mx {
namespace {

[[noreturn]] void malformed(const std::string& source, const std::string& value,
                            const std::string& expected) {
  throw InputError(str(source, "='", value, "' is not valid: expected ", expected));
}

int positive_int(const std::string& value, const std::string& source) {
  char* end = nullptr;
  const long n = std::strtol(value.c_str(), &end, 10);
  if (end == value.c_str() || *end != '\0' || n <= 0 || n > 1024)
    malformed(source, value, "an integer from 1 to 1024");
  return static_cast<int>(n);
}

bool on_off(const std::string& value, const std::string& source) {
  const std::string v = to_lower(value);
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  // A value meant as "off" must not leave a feature on unnoticed, or the reverse.
  malformed(source, value, "0 or 1");
}

// `allowed`'s first `shown` names are the ones the message lists.
std::string one_of(const std::string& value, const std::string& source,
                   const std::vector<std::string>& allowed, size_t shown) {
  if (std::find(allowed.begin(), allowed.end(), value) == allowed.end()) {
    const std::vector<std::string> listed(allowed.begin(), allowed.begin() + shown);
    malformed(source, value, "one of " + join(listed, ", ") + did_you_mean(value, listed));
  }
  return value;
}

int cores() {
  const int n = static_cast<int>(std::thread::hardware_concurrency());
  return n > 0 ? n : 1;
}

// The list. Each entry's parse sets one field; the defaults are the
// RuntimeConfig's own (num_threads: the cores, set by resolve_runtime_config).
// A function's static, so that a use during static initialisation finds it.
const std::vector<RuntimeSetting>& settings() {
  static const std::vector<RuntimeSetting> list{
      {"MX_ENGINE", "threaded or naive", "threaded", "engine",
       "the dependency engine; naive runs every operation synchronously (debugging)",
       [](RuntimeConfig& c, const std::string& v, const std::string& source) {
         // MXNet's spellings too.
         const std::string e = one_of(
             v, source,
             {"threaded", "naive", "ThreadedEngine", "ThreadedEnginePerDevice", "NaiveEngine"}, 2);
         c.naive_engine = e == "naive" || e == "NaiveEngine";
       }},
      {"MX_NUM_THREADS", "an integer from 1 to 1024", "the number of cores", "base",
       "the thread budget shared by engine workers, oneDNN calls and parallel loops",
       [](RuntimeConfig& c, const std::string& v, const std::string& source) {
         c.num_threads = positive_int(v, source);
       }},
      {"MX_CPU_WORKER_NTHREADS", "an integer from 1 to 1024",
       "the thread budget (mx-predict uses one of them)", "engine",
       "CPU worker threads of the engine",
       [](RuntimeConfig& c, const std::string& v, const std::string& source) {
         c.cpu_workers = positive_int(v, source);
       }},
      {"MX_DNNL", "0 or 1", "1", "op", "0: the reference CPU kernels instead of oneDNN's",
       [](RuntimeConfig& c, const std::string& v, const std::string& source) {
         c.dnnl = on_off(v, source);
       }},
      {"MX_DNNL_THREADS", "an integer from 1 to 1024",
       "the thread budget (divided among CPU replicas by mx-train)", "op",
       "OpenMP threads of each oneDNN call",
       [](RuntimeConfig& c, const std::string& v, const std::string& source) {
         c.dnnl_threads = positive_int(v, source);
       }},
      {"MX_GPU_TF32", "0 or 1", "0", "op",
       "1: float32 matrix products and convolutions on a GPU may use TF32 tensor cores",
       [](RuntimeConfig& c, const std::string& v, const std::string& source) {
         c.gpu_tf32 = on_off(v, source);
       }},
      {"MX_GPU_SYNC", "0 or 1", "0", "engine",
       "1: every GPU operation waits for its stream before it counts as finished",
       [](RuntimeConfig& c, const std::string& v, const std::string& source) {
         c.gpu_sync = on_off(v, source);
       }},
      {"MX_GPU_DETERMINISTIC", "0 or 1", "0", "op",
       "1: cuDNN convolutions use deterministic algorithms chosen from the shapes alone",
       [](RuntimeConfig& c, const std::string& v, const std::string& source) {
         c.gpu_deterministic = on_off(v, source);
       }},
      {"MX_CUDNN_BENCHMARK_LIMIT", "an integer from 1 to 1024", "32", "op",
       "how many of cuDNN's engine configurations are timed for each convolution pass "
       "(as PyTorch's torch.backends.cudnn.benchmark_limit)",
       [](RuntimeConfig& c, const std::string& v, const std::string& source) {
         c.cudnn_benchmark_limit = positive_int(v, source);
       }},
      {"MX_DNNL_WINOGRAD", "0 or 1", "1", "op",
       "0: 3x3 convolutions use oneDNN's direct algorithm instead of Winograd",
       [](RuntimeConfig& c, const std::string& v, const std::string& source) {
         c.dnnl_winograd = on_off(v, source);
       }},
      {"MX_DNNL_FUSE", "0 or 1", "1", "executor",
       "0: CPU inference runs the layers one by one instead of as fused oneDNN graphs",
       [](RuntimeConfig& c, const std::string& v, const std::string& source) {
         c.dnnl_fuse = on_off(v, source);
       }},
      {"MX_VMATH_ISA", "scalar, avx2 or avx512", "the widest this CPU runs", "op",
       "the vectorised float32 math kernels",
       [](RuntimeConfig& c, const std::string& v, const std::string& source) {
         c.vmath_isa = one_of(v, source, {"scalar", "avx2", "avx512"}, 3);
       }},
      {"MX_STEP_PROFILE", "0 or 1", "0", "train",
       "1: mx-train times each phase of a training step and prints the means per epoch",
       [](RuntimeConfig& c, const std::string& v, const std::string& source) {
         c.step_profile = on_off(v, source);
       }},
      {"MX_LOG_LEVEL", "debug, info, warning or error", "info", "base",
       "the least severe log lines shown",
       [](RuntimeConfig& c, const std::string& v, const std::string& source) {
         try {
           c.log_level = parse_log_level(v);
         } catch (const InputError&) {
           malformed(source, v, "debug, info, warning or error");
         }
       }},
      {"MX_NO_PROGRESS_BAR", "any non-empty value", "unset", "base",
       "set: progress comes as plain lines, not a live bar on a terminal",
       [](RuntimeConfig& c, const std::string&, const std::string&) { c.no_progress_bar = true; }},
      // The terminal's own variables, read by the progress bar.
      {"TERM", "the terminal's type", "unset", "base", "dumb: no live progress bar",
       [](RuntimeConfig& c, const std::string& v, const std::string&) {
         c.dumb_terminal = v == "dumb";
       }},
      {"COLUMNS", "a positive integer (other values are ignored)", "unset", "base",
       "the terminal's width when the terminal does not say",
       // The shell's variable, not ours to reject: anything else is ignored.
       [](RuntimeConfig& c, const std::string& v, const std::string&) {
         char* end = nullptr;
         const long n = std::strtol(v.c_str(), &end, 10);
         c.columns =
             end != v.c_str() && *end == '\0' && n > 0 && n < 100000 ? static_cast<int>(n) : 0;
       }},
  };
  return list;
}

// The configuration is the one piece of process-wide state besides the
// registries. It is process-wide by nature (one engine, one thread budget,
// one oneDNN per process) and immutable once installed or resolved, so a
// layer that reads it sees the same values for the whole run, whatever the
// order of first uses. It is never destroyed: the engine's destructor runs at
// exit, after other static objects may be gone, and may still read it.
std::atomic<const RuntimeConfig*> g_config{nullptr};
std::mutex g_config_mutex;

}  // namespace

const std::vector<RuntimeSetting>& runtime_settings() { return settings(); }

EnvironmentLookup process_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

RuntimeConfig resolve_runtime_config(const EnvironmentLookup& environment,
                                     const CommandLineSettings& command_line) {
  const std::vector<RuntimeSetting>& all = settings();
  for (const auto& entry : command_line) {
    // Not a structured binding: clang before 16 cannot capture one in a lambda.
    const std::string& name = entry.first;
    const bool known = std::any_of(all.begin(), all.end(),
                                   [&](const RuntimeSetting& s) { return name == s.name; });
    MX_CHECK(known, "the command line sets ", name, " (", entry.second.flag,
             "), which is not a setting");
  }
  RuntimeConfig config;
  config.num_threads = cores();
  for (const RuntimeSetting& s : all) {
    std::string value, source;
    if (auto it = command_line.find(s.name); it != command_line.end()) {
      value = it->second.value;
      source = it->second.flag;
    } else if (auto env = environment(s.name)) {
      value = *env;
      source = s.name;
    }
    if (!value.empty()) s.parse(config, value, source);
  }
  return config;
}

void install_runtime_config(const RuntimeConfig& config) {
  std::lock_guard<std::mutex> lock(g_config_mutex);
  MX_CHECK(g_config.load() == nullptr,
           "the runtime configuration is installed once, before anything reads it");
  g_config.store(new RuntimeConfig(config), std::memory_order_release);
}

const RuntimeConfig& runtime_config() {
  if (const RuntimeConfig* c = g_config.load(std::memory_order_acquire)) return *c;
  std::lock_guard<std::mutex> lock(g_config_mutex);
  if (const RuntimeConfig* c = g_config.load(std::memory_order_relaxed)) return *c;
  // No program installed one: from the environment. A malformed value throws
  // and nothing is stored, so every later use reports it again.
  auto* c = new RuntimeConfig(resolve_runtime_config(process_environment()));
  g_config.store(c, std::memory_order_release);
  return *c;
}

}  // namespace mx

// The runtime configuration: every setting parsed from a given environment
// and command line (never the process's own, so the cases do not depend on
// how the tests are run), with errors that name the variable and the value.
#include <doctest/doctest.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "base/error.h"
#include "base/runtime_config.h"
#include "base/threads.h"

using namespace mx;

namespace {

using Variables = std::map<std::string, std::string>;

EnvironmentLookup environment_of(Variables variables) {
  return [variables = std::move(variables)](const std::string& name) -> std::optional<std::string> {
    auto it = variables.find(name);
    if (it == variables.end()) return std::nullopt;
    return it->second;
  };
}

RuntimeConfig resolve(const Variables& variables, const CommandLineSettings& command_line = {}) {
  return resolve_runtime_config(environment_of(variables), command_line);
}

// The message of the InputError resolving `variables` throws ("" if none).
std::string error_of(const Variables& variables, const CommandLineSettings& command_line = {}) {
  try {
    resolve(variables, command_line);
  } catch (const InputError& e) {
    CHECK(e.exit_code() == 2);
    return e.what();
  }
  return "";
}

int cores() {
  const int n = static_cast<int>(std::thread::hardware_concurrency());
  return n > 0 ? n : 1;
}

}  // namespace

TEST_CASE("an empty environment gives every default") {
  const RuntimeConfig c = resolve({});
  CHECK(c.num_threads == cores());
  CHECK(c.log_level == LogLevel::kInfo);
  CHECK_FALSE(c.no_progress_bar);
  CHECK_FALSE(c.dumb_terminal);
  CHECK(c.columns == 0);
  CHECK_FALSE(c.naive_engine);
  CHECK(c.cpu_workers == 0);
  CHECK_FALSE(c.gpu_sync);
  CHECK(c.dnnl);
  CHECK(c.dnnl_winograd);
  CHECK(c.dnnl_threads == 0);
  CHECK(c.vmath_isa.empty());
  CHECK_FALSE(c.gpu_tf32);
  CHECK_FALSE(c.gpu_deterministic);
  CHECK(c.cudnn_benchmark_limit == 32);
  CHECK(c.dnnl_fuse);
  CHECK_FALSE(c.step_profile);
}

TEST_CASE("an empty value counts as unset") {
  Variables empty;
  for (const RuntimeSetting& s : runtime_settings()) empty[s.name] = "";
  const RuntimeConfig c = resolve(empty);
  CHECK(c.num_threads == cores());
  CHECK(c.cpu_workers == 0);
  CHECK(c.dnnl);
  CHECK_FALSE(c.naive_engine);
  CHECK_FALSE(c.no_progress_bar);
  CHECK(c.log_level == LogLevel::kInfo);
}

TEST_CASE("valid values set their fields") {
  const RuntimeConfig c = resolve({{"MX_ENGINE", "naive"},
                                   {"MX_NUM_THREADS", "3"},
                                   {"MX_CPU_WORKER_NTHREADS", "2"},
                                   {"MX_DNNL", "0"},
                                   {"MX_DNNL_THREADS", "1"},
                                   {"MX_GPU_TF32", "1"},
                                   {"MX_GPU_SYNC", "1"},
                                   {"MX_GPU_DETERMINISTIC", "1"},
                                   {"MX_CUDNN_BENCHMARK_LIMIT", "5"},
                                   {"MX_DNNL_WINOGRAD", "0"},
                                   {"MX_DNNL_FUSE", "0"},
                                   {"MX_VMATH_ISA", "scalar"},
                                   {"MX_STEP_PROFILE", "1"},
                                   {"MX_LOG_LEVEL", "debug"},
                                   {"MX_NO_PROGRESS_BAR", "anything"},
                                   {"TERM", "dumb"},
                                   {"COLUMNS", "132"}});
  CHECK(c.naive_engine);
  CHECK(c.num_threads == 3);
  CHECK(c.cpu_workers == 2);
  CHECK_FALSE(c.dnnl);
  CHECK(c.dnnl_threads == 1);
  CHECK(c.gpu_tf32);
  CHECK(c.gpu_sync);
  CHECK(c.gpu_deterministic);
  CHECK(c.cudnn_benchmark_limit == 5);
  CHECK_FALSE(c.dnnl_winograd);
  CHECK_FALSE(c.dnnl_fuse);
  CHECK(c.vmath_isa == "scalar");
  CHECK(c.step_profile);
  CHECK(c.log_level == LogLevel::kDebug);
  CHECK(c.no_progress_bar);
  CHECK(c.dumb_terminal);
  CHECK(c.columns == 132);
}

TEST_CASE("switches take 0/1 and the usual words; engines take MXNet's names too") {
  CHECK(resolve({{"MX_DNNL", "1"}}).dnnl);
  CHECK_FALSE(resolve({{"MX_DNNL", "false"}}).dnnl);
  CHECK_FALSE(resolve({{"MX_DNNL", "Off"}}).dnnl);
  CHECK(resolve({{"MX_STEP_PROFILE", "yes"}}).step_profile);
  CHECK_FALSE(resolve({{"MX_STEP_PROFILE", "0"}}).step_profile);
  CHECK(resolve({{"MX_ENGINE", "NaiveEngine"}}).naive_engine);
  CHECK_FALSE(resolve({{"MX_ENGINE", "ThreadedEnginePerDevice"}}).naive_engine);
  CHECK_FALSE(resolve({{"MX_ENGINE", "threaded"}}).naive_engine);
  CHECK(resolve({{"MX_LOG_LEVEL", "warn"}}).log_level == LogLevel::kWarning);
  CHECK(resolve({{"MX_NUM_THREADS", "1024"}}).num_threads == 1024);
  CHECK_FALSE(resolve({{"TERM", "xterm-256color"}}).dumb_terminal);
}

TEST_CASE("a malformed value is an InputError naming the variable and the value") {
  struct Case {
    const char* name;
    const char* value;
    const char* expected;
  };
  for (const Case& c :
       {Case{"MX_NUM_THREADS", "abc", "an integer from 1 to 1024"},
        Case{"MX_NUM_THREADS", "0", "an integer from 1 to 1024"},
        Case{"MX_NUM_THREADS", "4x", "an integer from 1 to 1024"},
        Case{"MX_NUM_THREADS", "1025", "an integer from 1 to 1024"},
        Case{"MX_CPU_WORKER_NTHREADS", "-2", "an integer from 1 to 1024"},
        Case{"MX_DNNL_THREADS", "two", "an integer from 1 to 1024"},
        Case{"MX_CUDNN_BENCHMARK_LIMIT", "0", "an integer from 1 to 1024"},
        Case{"MX_DNNL", "2", "0 or 1"}, Case{"MX_DNNL_WINOGRAD", "nope", "0 or 1"},
        Case{"MX_DNNL_FUSE", "off please", "0 or 1"}, Case{"MX_GPU_SYNC", "sync", "0 or 1"},
        Case{"MX_GPU_TF32", "tf32", "0 or 1"}, Case{"MX_GPU_DETERMINISTIC", "2", "0 or 1"},
        Case{"MX_STEP_PROFILE", "verbose", "0 or 1"},
        Case{"MX_ENGINE", "fast", "one of threaded, naive"},
        Case{"MX_VMATH_ISA", "avx3", "one of scalar, avx2, avx512"},
        Case{"MX_LOG_LEVEL", "loud", "debug, info, warning or error"}}) {
    CAPTURE(c.name);
    CAPTURE(c.value);
    const std::string message = error_of({{c.name, c.value}});
    CHECK(message == std::string(c.name) + "='" + c.value + "' is not valid: expected " +
                         c.expected +
                         (std::string(c.value) == "avx3" ? " (did you mean 'avx2'?)" : ""));
  }
}

TEST_CASE("the command line wins over the environment") {
  const CommandLineSettings threads{{"MX_NUM_THREADS", {"--threads", "2"}}};
  CHECK(resolve({{"MX_NUM_THREADS", "7"}}, threads).num_threads == 2);
  CHECK(resolve({}, threads).num_threads == 2);
  // The environment's value is not read at all: a malformed one is no error.
  CHECK(resolve({{"MX_NUM_THREADS", "lots"}}, threads).num_threads == 2);
  // Other settings still come from the environment.
  CHECK(resolve({{"MX_DNNL", "0"}}, threads).dnnl == false);
  // A malformed command-line value names the flag.
  CHECK(error_of({}, {{"MX_NUM_THREADS", {"--threads", "0"}}}) ==
        "--threads='0' is not valid: expected an integer from 1 to 1024");
  // A command line that names no setting is a bug of the program.
  CHECK_THROWS_AS(resolve({}, {{"MX_NO_SUCH", {"--no-such", "1"}}}), Error);
}

TEST_CASE("the list names each setting once, and says what it takes, its default and layer") {
  std::set<std::string> names;
  for (const RuntimeSetting& s : runtime_settings()) {
    CAPTURE(s.name);
    CHECK(names.insert(s.name).second);
    CHECK(std::string(s.values) != "");
    CHECK(std::string(s.default_value) != "");
    CHECK(std::set<std::string>{"base", "engine", "op", "executor", "train"}.count(s.layer) == 1);
    CHECK(std::string(s.description) != "");
    const bool parses = s.parse != nullptr;
    CHECK(parses);
  }
  CHECK(names.count("MX_NUM_THREADS") == 1);
}

TEST_CASE("the process's configuration is resolved once and read by the layers") {
  const RuntimeConfig& first = runtime_config();
  CHECK(&runtime_config() == &first);
  CHECK(thread_budget() == first.num_threads);
  CHECK(thread_budget() >= 1);
  // Installing after the first use would change what layers have read.
  CHECK_THROWS_AS(install_runtime_config(RuntimeConfig{}), Error);
}

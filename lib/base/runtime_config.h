// The process's runtime settings, in one place: every environment variable mx
// reads is listed in runtime_settings() (name, values, default, meaning, the
// layer that uses it) and resolved once into a RuntimeConfig. A program
// resolves it at start-up from its environment and command line (a flag
// wins over its variable; cmd/program.h) and installs it; the layers read the
// installed configuration through runtime_config() and never the
// environment. Used without a program (the C API, the Python package, unit
// tests), the configuration is resolved from the environment on first use.
// A malformed value is an InputError (exit code 2) naming the variable (or
// flag) and the value.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/logging.h"

namespace mx {

struct RuntimeConfig {
  // base
  int num_threads = 1;  // the thread budget: MX_NUM_THREADS, else the cores
  LogLevel log_level = LogLevel::kInfo;
  bool no_progress_bar = false;  // MX_NO_PROGRESS_BAR set (non-empty)
  bool dumb_terminal = false;    // TERM=dumb
  int columns = 0;               // COLUMNS when a positive integer, else 0
  // engine
  bool naive_engine = false;
  int cpu_workers = 0;  // MX_CPU_WORKER_NTHREADS; 0: not set (the budget, or the program's choice)
  bool gpu_sync = false;
  // op
  bool dnnl = true;
  bool dnnl_winograd = true;
  int dnnl_threads = 0;   // MX_DNNL_THREADS; 0: not set
  std::string vmath_isa;  // scalar, avx2, avx512; empty: the widest this CPU runs
  bool gpu_tf32 = false;
  bool gpu_deterministic = false;
  int cudnn_benchmark_limit = 32;  // graph-API engine configurations timed per convolution pass
  // executor
  bool dnnl_fuse = true;
  // train
  bool step_profile = false;
};

// One setting: an environment variable and the field of RuntimeConfig it sets.
struct RuntimeSetting {
  const char* name;           // the environment variable
  const char* values;         // what it takes, e.g. "0 or 1"
  const char* default_value;  // when unset or empty
  const char* layer;          // the layer of lib/ that uses it
  const char* description;
  // Sets the field from a non-empty value; throws InputError naming `source`
  // (the variable or the flag that gave it) and the value when malformed.
  void (*parse)(RuntimeConfig& config, const std::string& value, const std::string& source);
};

// Every setting, in the order of README.md's table.
const std::vector<RuntimeSetting>& runtime_settings();

// Where values come from: the environment (a lookup by name; nullopt when
// unset) and the command line (variable name -> flag and value), which wins.
using EnvironmentLookup = std::function<std::optional<std::string>(const std::string& name)>;
struct CommandLineSetting {
  std::string flag;  // e.g. "--threads", named in errors
  std::string value;
};
using CommandLineSettings = std::map<std::string, CommandLineSetting>;

// The process's environment variables.
EnvironmentLookup process_environment();

// Resolves every setting: the command line's value, else the environment's,
// else the default. An empty value counts as unset. Throws InputError for a
// malformed value (MX_CHECK fails for a command-line entry naming no setting).
RuntimeConfig resolve_runtime_config(const EnvironmentLookup& environment,
                                     const CommandLineSettings& command_line = {});

// Installs the program's configuration; once, before anything reads it
// (MX_CHECK fails otherwise, as the layers may have cached what they read).
void install_runtime_config(const RuntimeConfig& config);

// The installed configuration, else the one resolved from the environment on
// this first use (throws InputError while the environment holds a malformed
// value). Safe from any thread; the object lives to the end of the process.
const RuntimeConfig& runtime_config();

}  // namespace mx

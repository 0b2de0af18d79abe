// What every program's main() shares: the runtime configuration resolved from
// the environment and the command line and installed before the program's
// work (base/runtime_config.h); errors become one clear line on stderr (none
// for one already shown) and the exit code their kind asks for (2 bad
// input, 1 runtime failure). The body returns before the program ends, so
// everything it made is destroyed, its threads stopped, before the
// process's static objects.
#pragma once

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <exception>
#include <functional>
#include <iostream>

#include "base/error.h"
#include "base/runtime_config.h"

namespace mx {

// Debian's OpenBLAS 0.3.21 does not recognise some current CPUs and falls
// back to its slowest (Prescott) kernels, which makes every GEMM about 4x
// slower. OpenBLAS picks its kernels when the library loads, so the program
// names the kernel family by the CPU's features and starts itself again.
// OPENBLAS_CORETYPE set by the user is respected.
inline void choose_blas_kernels(char** argv) {
#if defined(__x86_64__)
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return;
  __builtin_cpu_init();
  const char* core = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
                         ? "SkylakeX"
                     : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? "Haswell"
                                                                                       : nullptr;
  if (core == nullptr) return;
  setenv("OPENBLAS_CORETYPE", core, 1);
  // Through the program's real path, so that ps, pkill and mpirun still see
  // it by its name (exec'ing /proc/self/exe names the process "exe").
  char path[4096];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n > 0) {
    path[n] = '\0';
    execv(path, argv);
  }
  execv("/proc/self/exe", argv);  // returns only on failure: go on with the default kernels
#else
  (void)argv;
#endif
}

// `command_line`, when given, says which runtime settings the parsed
// command line sets (e.g. {"MX_NUM_THREADS", {"--threads", "4"}}); they win
// over the environment.
inline int run_program(CLI::App& app, int argc, char** argv, const std::function<void()>& body,
                       const std::function<CommandLineSettings()>& command_line = {}) {
  choose_blas_kernels(argv);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    install_runtime_config(resolve_runtime_config(
        process_environment(), command_line ? command_line() : CommandLineSettings{}));
    body();
    return 0;
  } catch (const ReportedInputError& e) {
    return e.exit_code();  // already shown
  } catch (const Error& e) {
    std::cerr << app.get_name() << ": error: " << e.what() << "\n";
    return e.exit_code();
  } catch (const std::exception& e) {
    std::cerr << app.get_name() << ": error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace mx

// What every program's main() shares: errors become one clear line on stderr
// and the exit code their kind asks for (2 bad input, 1 runtime failure).
#pragma once

#include <CLI/CLI.hpp>
#include <exception>
#include <functional>
#include <iostream>

#include "base/error.h"

namespace mx {

inline int run_program(CLI::App& app, int argc, char** argv, const std::function<void()>& body) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    body();
    return 0;
  } catch (const Error& e) {
    std::cerr << app.get_name() << ": error: " << e.what() << "\n";
    return e.exit_code();
  } catch (const std::exception& e) {
    std::cerr << app.get_name() << ": error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace mx

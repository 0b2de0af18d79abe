// mx-pack's progress: one line on stderr, redrawn in place on a terminal and
// written every few seconds otherwise (a log keeps a readable history).
#pragma once

#include <chrono>
#include <string>

#include "io/pack.h"

namespace mx {

class PackProgressLine {
 public:
  explicit PackProgressLine(bool quiet);
  ~PackProgressLine() { finish(); }
  PackProgressLine(const PackProgressLine&) = delete;
  PackProgressLine& operator=(const PackProgressLine&) = delete;

  // Shows `what`'s progress when the last line is old enough or `p` is the end.
  void update(const std::string& what, const PackProgress& p);
  // Ends a line being redrawn, before other output.
  void finish();

 private:
  bool quiet_, tty_, open_ = false;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace mx

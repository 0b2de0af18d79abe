// mx-pack's progress: the shared progress line (base/progress_bar.h), a bar
// redrawn in place on a terminal, a plain line every few seconds otherwise
// (a log keeps a readable history).
#pragma once

#include <optional>
#include <string>

#include "base/progress_bar.h"
#include "io/pack.h"

namespace mx {

// The line for `what`'s progress (a bar, records, records/s, ETA, MB/s).
Progress pack_progress(const std::string& what, const PackProgress& p);

class PackProgressLine {
 public:
  explicit PackProgressLine(bool quiet);
  PackProgressLine(bool quiet, ProgressDisplay display, double plain_interval = 5);
  ~PackProgressLine() { finish(); }
  PackProgressLine(const PackProgressLine&) = delete;
  PackProgressLine& operator=(const PackProgressLine&) = delete;

  // Shows `what`'s progress when the last line is old enough or `p` is the end.
  void update(const std::string& what, const PackProgress& p);
  // Ends a line being redrawn, before other output.
  void finish();

 private:
  bool quiet_;
  ProgressDisplay display_;
  double plain_interval_;
  std::optional<double> last_plain_;
};

}  // namespace mx

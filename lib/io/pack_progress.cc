#include "io/pack_progress.h"

#include <cstdio>

namespace mx {

Progress pack_progress(const std::string& what, const PackProgress& p) {
  Progress line;
  line.label = what + ":";
  line.counting = "record";
  line.done = static_cast<int64_t>(p.done);
  line.total = static_cast<int64_t>(p.total);
  line.rate = p.seconds > 0 ? static_cast<double>(p.done) / p.seconds : 0;
  line.rate_unit = "records/s";
  if (line.rate > 0) line.eta = static_cast<double>(p.total - p.done) / line.rate;
  char mb[48];
  std::snprintf(mb, sizeof mb, " %.1f MB/s",
                p.seconds > 0 ? static_cast<double>(p.bytes) / p.seconds / 1e6 : 0.0);
  line.tail = mb;
  return line;
}

PackProgressLine::PackProgressLine(bool quiet)
    : PackProgressLine(quiet, ProgressDisplay::on_stderr()) {}

PackProgressLine::PackProgressLine(bool quiet, ProgressDisplay display, double plain_interval)
    : quiet_(quiet), display_(std::move(display)), plain_interval_(plain_interval) {}

void PackProgressLine::update(const std::string& what, const PackProgress& p) {
  if (quiet_) return;
  const bool end = p.done >= p.total;
  bool due = end;
  if (!display_.live()) {
    // A plain line every plain_interval seconds (the first one after it).
    const double now = display_.now();
    if (!last_plain_) last_plain_ = now;
    if (now - *last_plain_ >= plain_interval_) due = true;
    if (due) last_plain_ = now;
  }
  display_.update(pack_progress(what, p), due);
}

void PackProgressLine::finish() { display_.finish(); }

}  // namespace mx

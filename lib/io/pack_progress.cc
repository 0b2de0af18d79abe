#include "io/pack_progress.h"

#include <unistd.h>

#include <cstdio>
#include <iostream>

namespace mx {

PackProgressLine::PackProgressLine(bool quiet) : quiet_(quiet), tty_(::isatty(2) != 0) {}

void PackProgressLine::update(const std::string& what, const PackProgress& p) {
  if (quiet_) return;
  const auto now = std::chrono::steady_clock::now();
  const double interval = tty_ ? 0.25 : 5.0;
  if (p.done < p.total && std::chrono::duration<double>(now - last_).count() < interval) return;
  last_ = now;
  const double rate = p.seconds > 0 ? static_cast<double>(p.done) / p.seconds : 0;
  const double eta = rate > 0 ? static_cast<double>(p.total - p.done) / rate : 0;
  char line[256];
  std::snprintf(
      line, sizeof line, "%s: %llu/%llu (%.1f%%), %.0f records/s, %.1f MB/s, ETA %.0f s",
      what.c_str(), static_cast<unsigned long long>(p.done),
      static_cast<unsigned long long>(p.total),
      p.total ? 100.0 * static_cast<double>(p.done) / static_cast<double>(p.total) : 100.0, rate,
      p.seconds > 0 ? static_cast<double>(p.bytes) / p.seconds / 1e6 : 0.0, eta);
  if (tty_) {
    std::cerr << "\r" << line << "\033[K" << std::flush;
    open_ = true;
  } else {
    std::cerr << line << "\n";
  }
}

void PackProgressLine::finish() {
  if (open_) std::cerr << "\n";
  open_ = false;
}

}  // namespace mx

#include "base/progress_bar.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "base/runtime_config.h"

namespace mx {

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--:--";
  const auto s = static_cast<int64_t>(seconds + 0.5);
  char buf[48];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%lld:%02d:%02d", static_cast<long long>(s / 3600),
                  static_cast<int>(s / 60 % 60), static_cast<int>(s % 60));
  else
    std::snprintf(buf, sizeof buf, "%d:%02d", static_cast<int>(s / 60), static_cast<int>(s % 60));
  return buf;
}

namespace {

std::string rate_text(double rate) {
  char buf[48];
  std::snprintf(buf, sizeof buf, rate >= 100 ? "%.0f" : "%.1f", std::isfinite(rate) ? rate : 0.0);
  return buf;
}

std::string count_text(const Progress& p) {
  std::string text = std::to_string(p.done);
  if (p.total) text += "/" + std::to_string(*p.total);
  return text;
}

// The figures after the bar: count, rate, times.
std::string figures(const Progress& p, bool with_counting) {
  std::string text = (with_counting ? p.counting + " " : std::string()) + count_text(p) + " " +
                     rate_text(p.rate) + " " + p.rate_unit;
  if (p.eta) text += " ETA " + format_duration(*p.eta);
  if (p.run_eta) text += " run " + format_duration(*p.run_eta);
  return text;
}

}  // namespace

std::string render_bar(double fraction, int cells) {
  if (!std::isfinite(fraction)) fraction = 0;
  fraction = std::clamp(fraction, 0.0, 1.0);
  cells = std::max(cells, 0);
  const int filled = static_cast<int>(fraction * cells);
  return "[" + std::string(static_cast<size_t>(filled), '#') +
         std::string(static_cast<size_t>(cells - filled), '.') + "]";
}

std::string render_live_line(const Progress& p, int width) {
  const int room = std::max(width - 1, 1);
  const std::string head = p.label.empty() ? std::string() : p.label + " ";
  const std::string body = figures(p, false);
  std::string bar;
  if (p.total && *p.total > 0) {
    // The bar takes what is left of the line after the figures and the
    // tail, between 10 and 30 cells; on a narrow terminal the tail goes first.
    const int fixed = static_cast<int>(head.size() + body.size() + p.tail.size()) + 3;
    const int cells = std::clamp(room - fixed, 10, 30);
    bar = render_bar(static_cast<double>(p.done) / static_cast<double>(*p.total), cells) + " ";
  }
  std::string line = head + bar + body + p.tail;
  if (static_cast<int>(line.size()) > room) line.resize(static_cast<size_t>(room));
  return line;
}

std::string render_plain_line(const Progress& p) {
  std::string line = p.label.empty() ? std::string() : p.label + " ";
  return line + figures(p, true) + p.tail;
}

bool live_progress_terminal(int fd, const RuntimeConfig& config) {
  return ::isatty(fd) != 0 && !config.dumb_terminal && !config.no_progress_bar;
}

bool live_progress_terminal(int fd) { return live_progress_terminal(fd, runtime_config()); }

int terminal_width(int fd, const RuntimeConfig& config) {
  winsize size{};
  if (::ioctl(fd, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return config.columns > 0 ? config.columns : 80;
}

int terminal_width(int fd) { return terminal_width(fd, runtime_config()); }

ProgressDisplay::Clock ProgressDisplay::steady_clock() {
  return [] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
}

ProgressDisplay::ProgressDisplay(std::ostream& out, bool live, int width, Clock clock,
                                 double redraw_seconds)
    : out_(&out),
      live_(live),
      width_(width),
      clock_(std::move(clock)),
      redraw_seconds_(redraw_seconds) {}

ProgressDisplay ProgressDisplay::on_stderr() {
  const bool live = live_progress_terminal(STDERR_FILENO);
  return ProgressDisplay(std::cerr, live, live ? terminal_width(STDERR_FILENO) : 80);
}

bool ProgressDisplay::wants(bool due) const {
  if (due) return true;
  return live_ && (!last_draw_ || clock_() - *last_draw_ >= redraw_seconds_);
}

void ProgressDisplay::update(const Progress& p, bool due) {
  if (!wants(due)) return;
  if (!live_) {
    *out_ << render_plain_line(p) << "\n" << std::flush;
    return;
  }
  last_draw_ = clock_();
  *out_ << "\r" << render_live_line(p, width_) << "\033[K" << std::flush;
  open_ = true;
}

void ProgressDisplay::finish() {
  if (open_) *out_ << "\n" << std::flush;
  open_ = false;
}

}  // namespace mx

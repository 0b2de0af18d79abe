// A progress line shared by the programs (mx-train's epochs, mx-pack,
// mx-predict): on a terminal one line redrawn in place with a bar, the count,
// the rate, the time left and a tail (running metrics); elsewhere (a log, a
// pipe, TERM=dumb, MX_NO_PROGRESS_BAR set) plain lines written when the
// caller says one is due, so a log keeps a readable history.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>

namespace mx {

struct RuntimeConfig;

// "m:ss" or "h:mm:ss"; "--:--" for an unknown time.
std::string format_duration(double seconds);

// What one progress line shows.
struct Progress {
  std::string label;               // "epoch 2/10", "train.rec"
  std::string counting = "batch";  // what `done` counts, printed before it in plain lines
  int64_t done = 0;
  std::optional<int64_t> total;  // unknown: no bar and no time left
  double rate = 0;               // per second
  std::string rate_unit = "samples/s";
  std::optional<double> eta;      // seconds left of this part
  std::optional<double> run_eta;  // seconds left of the whole run
  std::string tail;               // e.g. " acc 0.9123 ce 0.2345"
};

// "[#######.......]": `cells` cells, the done fraction filled.
std::string render_bar(double fraction, int cells);
// The line for a terminal `width` columns wide: never wider than width - 1
// (a full line would wrap on some terminals), the tail cut first.
std::string render_live_line(const Progress& p, int width);
// The line for a log: no bar, every figure.
std::string render_plain_line(const Progress& p);

// Whether `fd` is a terminal that takes a redrawn line: a tty, TERM not
// "dumb", and MX_NO_PROGRESS_BAR not set (to any non-empty value), as the
// runtime configuration (runtime_config.h, by default the process's) says.
bool live_progress_terminal(int fd, const RuntimeConfig& config);
bool live_progress_terminal(int fd);
// Columns of the terminal on `fd` (else $COLUMNS, else 80).
int terminal_width(int fd, const RuntimeConfig& config);
int terminal_width(int fd);

// Writes progress lines to a stream: live (redrawn, at most every
// `redraw_seconds` unless due) or plain (only the due ones).
class ProgressDisplay {
 public:
  using Clock = std::function<double()>;  // seconds, monotonic
  static Clock steady_clock();

  ProgressDisplay(std::ostream& out, bool live, int width = 80, Clock clock = steady_clock(),
                  double redraw_seconds = 0.25);
  // The display on stderr a program uses (live when stderr is such a terminal).
  static ProgressDisplay on_stderr();

  // Shows `p` when `due` (a plain line, or a redraw) or, live, when the last
  // redraw is old enough.
  void update(const Progress& p, bool due);
  // Whether update(..., due) would draw: callers skip building the line
  // (reading metrics waits for the computation) when it would not.
  bool wants(bool due) const;
  // Ends a redrawn line, before other output.
  void finish();
  bool live() const { return live_; }
  double now() const { return clock_(); }

 private:
  std::ostream* out_;
  bool live_;
  int width_;
  Clock clock_;
  double redraw_seconds_;
  std::optional<double> last_draw_;
  bool open_ = false;
};

}  // namespace mx

// The progress line shared by the programs: its rendering for a terminal and
// for a log, and when it is drawn (an injected clock and stream).
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <map>
#include <optional>
#include <sstream>
#include <string>

#include "base/progress_bar.h"
#include "base/runtime_config.h"

using namespace mx;

namespace {

Progress epoch_progress() {
  Progress p;
  p.label = "epoch 2/10";
  p.done = 117;
  p.total = 469;
  p.rate = 3456.78;
  p.eta = 42;
  p.run_eta = 3 * 3600 + 62;
  p.tail = " accuracy 0.8123 cross-entropy 0.4012";
  return p;
}

// A clock the test moves by hand.
struct FakeClock {
  double t = 100;
  ProgressDisplay::Clock clock() {
    return [this] { return t; };
  }
};

// The runtime configuration of an environment holding only `variables`.
RuntimeConfig config_of(const std::map<std::string, std::string>& variables) {
  return resolve_runtime_config([&](const std::string& name) -> std::optional<std::string> {
    auto it = variables.find(name);
    if (it == variables.end()) return std::nullopt;
    return it->second;
  });
}

// A pseudo-terminal pair, closed at the end.
struct PseudoTerminal {
  int master = -1, slave = -1;
  PseudoTerminal() {
    master = ::posix_openpt(O_RDWR | O_NOCTTY);
    REQUIRE(master >= 0);
    REQUIRE(::grantpt(master) == 0);
    REQUIRE(::unlockpt(master) == 0);
    slave = ::open(::ptsname(master), O_RDWR | O_NOCTTY);
    REQUIRE(slave >= 0);
  }
  ~PseudoTerminal() {
    if (slave >= 0) ::close(slave);
    if (master >= 0) ::close(master);
  }
  PseudoTerminal(const PseudoTerminal&) = delete;
  PseudoTerminal& operator=(const PseudoTerminal&) = delete;
};

}  // namespace

TEST_CASE("a terminal gets the live bar unless TERM=dumb or MX_NO_PROGRESS_BAR is set") {
  PseudoTerminal pty;
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  const RuntimeConfig xterm = config_of({{"TERM", "xterm"}});
  CHECK(live_progress_terminal(pty.slave, xterm));
  CHECK_FALSE(live_progress_terminal(pipe_fds[1], xterm));
  // Set but empty: not an opt-out.
  CHECK(live_progress_terminal(pty.slave,
                               config_of({{"TERM", "xterm"}, {"MX_NO_PROGRESS_BAR", ""}})));
  CHECK_FALSE(live_progress_terminal(pty.slave, config_of({{"TERM", "dumb"}})));
  CHECK_FALSE(live_progress_terminal(pty.slave,
                                     config_of({{"TERM", "xterm"}, {"MX_NO_PROGRESS_BAR", "1"}})));
  // The width: the terminal's, else $COLUMNS, else 80.
  winsize size{};
  size.ws_col = 123;
  size.ws_row = 40;
  REQUIRE(::ioctl(pty.master, TIOCSWINSZ, &size) == 0);
  CHECK(terminal_width(pty.slave, config_of({{"COLUMNS", "97"}})) == 123);
  CHECK(terminal_width(pipe_fds[1], config_of({{"COLUMNS", "97"}})) == 97);
  CHECK(terminal_width(pipe_fds[1], config_of({})) == 80);
  // COLUMNS is the shell's: a value that is no width is ignored, not an error.
  CHECK(terminal_width(pipe_fds[1], config_of({{"COLUMNS", "wide"}})) == 80);
  CHECK(terminal_width(pipe_fds[1], config_of({{"COLUMNS", "0"}})) == 80);
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}

TEST_CASE("durations read m:ss below an hour and h:mm:ss above; unknown ones --:--") {
  CHECK(format_duration(0) == "0:00");
  CHECK(format_duration(59.4) == "0:59");
  CHECK(format_duration(59.6) == "1:00");
  CHECK(format_duration(754) == "12:34");
  CHECK(format_duration(3600) == "1:00:00");
  CHECK(format_duration(100 * 3600 + 61) == "100:01:01");
  CHECK(format_duration(-1) == "--:--");
  CHECK(format_duration(1.0 / 0.0) == "--:--");
}

TEST_CASE("the bar fills its cells by the done fraction, clamped") {
  CHECK(render_bar(0, 4) == "[....]");
  CHECK(render_bar(0.5, 4) == "[##..]");
  CHECK(render_bar(0.99, 4) == "[###.]");
  CHECK(render_bar(1, 4) == "[####]");
  CHECK(render_bar(2, 4) == "[####]");
  CHECK(render_bar(-1, 4) == "[....]");
}

TEST_CASE("a terminal line has the bar, count, rate, both ETAs and metrics within the width") {
  const Progress p = epoch_progress();
  const std::string wide = render_live_line(p, 160);
  CHECK(wide.rfind("epoch 2/10 [", 0) == 0);
  CHECK(wide.find("] 117/469 3457 samples/s ETA 0:42 run 3:01:02") != std::string::npos);
  CHECK(wide.find(" accuracy 0.8123 cross-entropy 0.4012") != std::string::npos);
  CHECK(wide.find("[" + std::string(30 * 117 / 469, '#')) != std::string::npos);  // 30 cells
  CHECK(wide.size() < 160);
  // 80 columns: a shorter bar, and the line never reaches the last column.
  const std::string narrow = render_live_line(p, 80);
  CHECK(narrow.size() <= 79);
  CHECK(narrow.find("117/469") != std::string::npos);
  CHECK(narrow.find("[##........]") != std::string::npos);  // 10 cells at least
  // Very narrow: cut, the tail first.
  const std::string tiny = render_live_line(p, 30);
  CHECK(tiny.size() == 29);
  CHECK(tiny.find("accuracy") == std::string::npos);
}

TEST_CASE("without a total there is no bar and no time left") {
  Progress p = epoch_progress();
  p.total.reset();
  p.eta.reset();
  p.run_eta.reset();
  p.rate = 12.25;
  const std::string line = render_live_line(p, 120);
  CHECK(line.find('[') == std::string::npos);
  CHECK(line.find("117 12.2 samples/s") != std::string::npos);
  CHECK(line.find("ETA") == std::string::npos);
}

TEST_CASE("a log line has every figure and no bar") {
  CHECK(render_plain_line(epoch_progress()) ==
        "epoch 2/10 batch 117/469 3457 samples/s ETA 0:42 run 3:01:02 accuracy 0.8123 "
        "cross-entropy 0.4012");
}

TEST_CASE("not on a terminal: a line per due update, nothing in between, no escape codes") {
  std::ostringstream out;
  FakeClock clock;
  ProgressDisplay display(out, false, 80, clock.clock());
  Progress p = epoch_progress();
  display.update(p, false);
  clock.t += 100;
  display.update(p, false);
  CHECK(out.str().empty());
  CHECK_FALSE(display.wants(false));
  display.update(p, true);
  p.done = 118;
  display.update(p, true);
  display.finish();
  CHECK(out.str() == render_plain_line(epoch_progress()) + "\n" + render_plain_line(p) + "\n");
}

TEST_CASE("on a terminal: one line redrawn in place, at most every redraw interval") {
  std::ostringstream out;
  FakeClock clock;
  ProgressDisplay display(out, true, 100, clock.clock(), 0.25);
  Progress p = epoch_progress();
  display.update(p, false);  // the first draw
  p.done = 118;
  clock.t += 0.1;
  CHECK_FALSE(display.wants(false));
  display.update(p, false);  // too soon
  clock.t += 0.2;
  CHECK(display.wants(false));
  display.update(p, false);
  p.done = 119;
  display.update(p, true);  // due: drawn at once
  display.finish();
  display.finish();  // a second finish adds nothing
  const std::string text = out.str();
  CHECK(text.find('\n') == text.size() - 1);
  CHECK(text.find(" 117/469") != std::string::npos);
  CHECK(text.find(" 118/469") != std::string::npos);
  CHECK(text.find(" 119/469") != std::string::npos);
  size_t redraws = 0;
  for (size_t at = text.find('\r'); at != std::string::npos; at = text.find('\r', at + 1))
    ++redraws;
  CHECK(redraws == 3);
  CHECK(text.find("\033[K") != std::string::npos);  // clears what a longer line left
}

TEST_CASE("finish without a drawn line writes nothing") {
  std::ostringstream out;
  ProgressDisplay display(out, true, 80);
  display.finish();
  CHECK(out.str().empty());
}

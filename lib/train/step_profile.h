// MX_STEP_PROFILE=1: where a training step's time goes. The loop marks the
// end of each phase; with the profile on, each mark waits for the engine to
// finish what the phase pushed, so phases are timed one after the other (they
// overlap in a normal run, so the sum exceeds a normal step). Off, a mark
// costs one branch.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <string>

namespace mx::train {

class StepProfile {
 public:
  enum Phase { kData, kCopyIn, kForward, kBackward, kUpdate, kMetric, kWatch, kPhases };

  StepProfile();
  bool on() const { return on_; }
  // The start of a step (before its batch is read).
  void begin_step();
  // The end of phase p: waits for the engine, adds the time since the last mark.
  void mark(Phase p);
  // One line per phase: mean ms per step, share of the total; then resets.
  std::string report_and_reset();

 private:
  using Clock = std::chrono::steady_clock;
  bool on_ = false;
  Clock::time_point last_;
  std::array<double, kPhases> ms_{};
  int64_t steps_ = 0;
};

}  // namespace mx::train

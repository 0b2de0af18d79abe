#include "train/step_profile.h"

#include <iomanip>
#include <sstream>

#include "base/runtime_config.h"
#include "engine/engine.h"

namespace mx::train {

StepProfile::StepProfile() : on_(runtime_config().step_profile) {}

void StepProfile::begin_step() {
  if (!on_) return;
  Engine::get().wait_all();
  last_ = Clock::now();
  ++steps_;
}

void StepProfile::mark(Phase p) {
  if (!on_) return;
  Engine::get().wait_all();
  const auto now = Clock::now();
  ms_[p] += std::chrono::duration<double, std::milli>(now - last_).count();
  last_ = now;
}

std::string StepProfile::report_and_reset() {
  static constexpr std::array<const char*, kPhases> kNames{
      "data (iterator)", "copy into bound arrays", "forward", "backward", "update (optimizer)",
      "metrics",         "non-finite check"};
  double total = 0;
  for (double v : ms_) total += v;
  std::ostringstream out;
  const double steps = static_cast<double>(steps_ > 0 ? steps_ : 1);
  out << std::fixed << std::setprecision(3) << "step profile (MX_STEP_PROFILE, " << steps_
      << " steps, phases waited for one by one):";
  for (int p = 0; p < kPhases; ++p)
    out << "\n  " << std::left << std::setw(24) << kNames[static_cast<size_t>(p)] << std::right
        << std::setw(9) << ms_[static_cast<size_t>(p)] / steps << " ms  " << std::setprecision(1)
        << std::setw(5) << (total > 0 ? 100.0 * ms_[static_cast<size_t>(p)] / total : 0.0) << "%"
        << std::setprecision(3);
  out << "\n  " << std::left << std::setw(24) << "total" << std::right << std::setw(9)
      << total / steps << " ms";
  ms_ = {};
  steps_ = 0;
  return out.str();
}

}  // namespace mx::train

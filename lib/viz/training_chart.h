// The charts of training runs, built from their histories (run_history.h):
// one run's curves (curves.png: loss and each metric for training and
// validation, the learning rate on its own panel) and several runs compared
// on the same axes (mx-plot; per epoch only).
#pragma once

#include <string>
#include <vector>

#include "viz/chart.h"
#include "viz/run_history.h"

namespace mx::viz {

// How a series is shown: its panel title, its axis label with the unit, and
// the factor its values are shown with (accuracy as a percentage).
struct SeriesLook {
  std::string title, axis_label;
  double scale = 1;
};
SeriesLook series_look(const std::string& name);

// One run's curves: a panel per metric (train solid, validation dashed,
// and the running training metric of each log interval as a thin light line
// behind them when the run recorded it), the learning rate's panel; titled with the run's name and
// its best validation figure.
Chart run_curves_chart(const RunHistory& run);

// What compare_chart's x axis shows: the epoch, or the training time at
// each epoch's end (the sum of the epochs' "seconds"), as the MXNet paper's
// convergence figure plots accuracy against wall-clock time.
enum class XAxis { kEpoch, kTime };

// The series `names` of several runs, a panel per name with a line per run.
// Empty `names`: the validation metrics (the training ones if there are
// none) and the learning rate. A name no run has is an InputError listing
// the names there are; so is kTime for a run without its epochs' seconds.
Chart compare_chart(const std::vector<RunHistory>& runs, const std::vector<std::string>& names,
                    XAxis x = XAxis::kEpoch);

}  // namespace mx::viz

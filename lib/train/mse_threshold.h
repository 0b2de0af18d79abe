// The mean-squared-error calibration of post-training quantization: of
// the clipping thresholds a value's histogram allows, the one that
// minimises the expected squared error of quantizing its elements —
// rounding inside the range, clipping outside it. Unlike the KL
// threshold, it weighs an element by how far it is moved, so a sparse
// tail of large values (a residual stream's) is kept where clipping it
// would cost more than the coarser steps do.
#pragma once

#include "train/kl_threshold.h"

namespace mx::train {

struct MseThreshold {
  double threshold = 0;  // the values are clipped to [-threshold, threshold]
  double error = 0;      // the expected squared error per element at that threshold
};

// `steps`: the quantization steps between zero and the threshold (255
// for a value held as uint8 over [0, threshold], 127 for int8 over
// [-threshold, threshold]). Candidates are the histogram's bin edges;
// an element inside the range is charged step^2 / 12 (or its own square
// where it rounds to zero), one outside (|x| - threshold)^2, both at
// its bin's centre.
MseThreshold mse_threshold(const Histogram& histogram, int steps);

}  // namespace mx::train

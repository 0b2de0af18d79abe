// The math functions of the nn kernels' per-element functors, for float and
// double, callable on the host and on a GPU: the C library's names (expf,
// exp, ...) exist in both, where std:: overloads are host-only. On the CPU
// they are the functions std::exp & co. call, so shared functors give the
// CPU kernels the values they gave before.
#pragma once

#include <cmath>

#include "base/host_device.h"

namespace mx::op::nnmath {

// clang-format off
MX_HOST_DEVICE inline float exp(float x) { return ::expf(x); }
MX_HOST_DEVICE inline double exp(double x) { return ::exp(x); }
MX_HOST_DEVICE inline float expm1(float x) { return ::expm1f(x); }
MX_HOST_DEVICE inline double expm1(double x) { return ::expm1(x); }
MX_HOST_DEVICE inline float log(float x) { return ::logf(x); }
MX_HOST_DEVICE inline double log(double x) { return ::log(x); }
MX_HOST_DEVICE inline float log1p(float x) { return ::log1pf(x); }
MX_HOST_DEVICE inline double log1p(double x) { return ::log1p(x); }
MX_HOST_DEVICE inline float tanh(float x) { return ::tanhf(x); }
MX_HOST_DEVICE inline double tanh(double x) { return ::tanh(x); }
MX_HOST_DEVICE inline float erf(float x) { return ::erff(x); }
MX_HOST_DEVICE inline double erf(double x) { return ::erf(x); }
MX_HOST_DEVICE inline float sqrt(float x) { return ::sqrtf(x); }
MX_HOST_DEVICE inline double sqrt(double x) { return ::sqrt(x); }
MX_HOST_DEVICE inline float abs(float x) { return ::fabsf(x); }
MX_HOST_DEVICE inline double abs(double x) { return ::fabs(x); }
// clang-format on

}  // namespace mx::op::nnmath

// The one test harness for every operator (Caffe's gradient checker, ggml's
// coverage check, llm.c's reference check):
//   - check_gradient: backward against central finite differences, in float64,
//     for every request a kernel must honour: write (into NaN-filled buffers,
//     so a forgotten element fails), add (onto random values) and null (the
//     buffer keeps what it held);
//   - check_reference: forward outputs and input gradients against values
//     computed by real MXNet 1.9.1 (fixtures made by scripts/fixtures/make_op_fixtures.py),
//     written into NaN-filled buffers;
//   - check_implementations: the oneDNN kernels against the reference ones
//     in float32 (called by check_gradient on every case);
//   - check_device: the case on a device (gpu:0) against the CPU in float32:
//     outputs, auxiliary states after the forward pass, and input gradients
//     for req write (NaN-filled), add (random values) and null (untouched);
//     check_reference_on: the MXNet fixtures on a device.
//   Compiled with MX_OP_HARNESS_GPU=1 (test_ops_gpu, label gpu), the family
//   test files run unchanged: check_gradient becomes check_device on gpu:0
//   and check_reference becomes check_reference_on gpu:0, for operators
//   with a GPU kernel (others are left to test_gpu_kernel_coverage).
//   MX_HARNESS_DEVICE=cpu:1 runs the same comparison on a second CPU
//   context, which tests the harness where there is no GPU.
//   - check_gradient and check_reference record the operator (by registered name) in
//   $MX_OP_COVERAGE_FILE,
//     which test_op_coverage reads to find operators without either check.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ndarray/ndarray.h"
#include "op/invoke.h"

namespace mx::test {

struct GradientCheckOptions {
  std::vector<Shape> aux_shapes;  // auxiliary states (filled with `aux_values`)
  double aux_value = 1.0;
  bool is_train = true;
  double step = 1e-6;
  double rtol = 1e-4, atol = 1e-6;
  // Inputs whose gradient is not checked (labels, indices).
  std::vector<int> skip_inputs;
  // Inputs that hold integer-valued data in [0, integer_range) (labels, indices).
  std::vector<int> integer_inputs;
  int integer_range = 4;
  // Inputs drawn from [low, high] (default [-1, 1]); e.g. positive for log/sqrt.
  double low = -1.0, high = 1.0;
  // Inputs kept away from 0 by at least this much (kinks of relu/abs).
  double min_abs = 0.0;
  uint64_t seed = 7;
  // For loss operators (whose backward ignores output gradients): the loss
  // whose gradient the backward computes, from the forward outputs and the
  // inputs (all as float64 vectors). Unset: L = sum_k sum(output_k * w_k).
  std::function<double(const std::vector<std::vector<double>>& outputs,
                       const std::vector<std::vector<double>>& inputs)>
      loss;
  // At most this many elements per input are perturbed (chosen at random).
  int max_checks_per_input = 120;
};

// Runs the operator in float64 on random inputs and compares the gradient of
// L = sum_k sum(output_k * w_k) (random weights w_k on the visible outputs),
// or of options.loss for loss operators, with central differences of L.
void check_gradient(const std::string& op, const op::AttrMap& attrs,
                    const std::vector<Shape>& input_shapes,
                    const GradientCheckOptions& options = {});

// Runs the case in float32 on both CPU implementations (oneDNN and the
// reference kernels, op/dnnl/dnnl_switch.h) and compares the outputs, the
// auxiliary states after the forward pass and the input gradients for req
// write (into NaN-filled buffers) and add. check_gradient calls it on every
// case; with oneDNN not built in there is nothing to compare.
void check_implementations(const std::string& op, const op::AttrMap& attrs,
                           const std::vector<Shape>& input_shapes,
                           const GradientCheckOptions& options = {});

// The inputs, outputs and gradients of one case computed by real MXNet.
struct ReferenceCase {
  std::string id, op;
  bool is_train = false;
  op::AttrMap attrs;
  std::vector<NDArray> inputs, aux, outputs, out_grads, in_grads, aux_after;
};

// Every case of the committed fixture file `family` (tests/fixtures/ops/FAMILY.params + .cases).
std::vector<ReferenceCase> load_reference_cases(const std::string& family);

// Runs one case in mx and compares forward outputs (and, where the fixture
// has them, input gradients and updated auxiliary states) within tolerance,
// on each CPU implementation (oneDNN when built in, and the reference).
void check_reference(const ReferenceCase& c, double rtol = 1e-4, double atol = 1e-5);

// The device test_ops_gpu compares with the CPU: gpu:0, or
// $MX_HARNESS_DEVICE (cpu:1 runs the harness itself here, CPU against CPU).
Context harness_device();

// True when this build has CUDA and a GPU is present.
bool gpu_present();

// True when `op` has a forward kernel on `device`'s kind.
bool has_device_kernel(const std::string& op, Context device);

// Runs the case on `device` and on the CPU (the reference) in float32 and
// compares the outputs, the auxiliary states after the forward pass and the
// input gradients for req write (into NaN-filled buffers) and add (onto
// random values); inputs in options.skip_inputs get req null and must keep
// what their buffers held. Random operators (Dropout) are compared on their
// gradients only (from the device's mask).
void check_device(const std::string& op, const op::AttrMap& attrs,
                  const std::vector<Shape>& input_shapes, Context device,
                  const GradientCheckOptions& options = {});

// check_reference's comparison with MXNet's values, run on `device`.
void check_reference_on(const ReferenceCase& c, Context device, double rtol = 1e-4,
                        double atol = 1e-5);

// Max |a - b| / (atol + rtol |b|) over elements; <= 1 means close. NaN
// against a number is never close (support/compare.h).
double closeness(const NDArray& a, const NDArray& b, double rtol, double atol);

}  // namespace mx::test

// Which CPU kernels run: oneDNN's (the default when mx is built with it) or
// the OpenBLAS/im2col reference kernels. MX_DNNL=0 in the runtime
// configuration (base/runtime_config.h) turns oneDNN off for the whole
// process; tests and benchmarks flip it with ScopedDnnl to compare both.
#pragma once

namespace mx::op {

// True when mx was built with oneDNN (CMake option MX_USE_DNNL).
bool dnnl_built();

// True when the oneDNN kernels are used where they support the case.
bool dnnl_enabled();

// Overrides MX_DNNL; ignored (stays off) when oneDNN is not built in.
void set_dnnl_enabled(bool on);

// Threads of one oneDNN call when MX_DNNL_THREADS is not set; 0 (the
// default) means the whole thread budget. mx-train sets budget / replicas
// when it trains one executor per CPU device (train/process_threads.h): the
// replicas' calls run side by side, each on its share of the cores.
void set_dnnl_call_threads(int threads);
int dnnl_call_threads();

// Whether oneDNN's Winograd convolution runs the 3x3 stride-1 convolutions
// it wins on (op/dnnl/dnnl_descs.h: winograd_wins in training,
// winograd_wins_keeping_weights in fused inference graphs): on by default,
// off with MX_DNNL_WINOGRAD=0. Its sums differ from the direct
// algorithm's by rounding (about 1e-6 of the output's scale).
bool dnnl_winograd_enabled();
void set_dnnl_winograd_enabled(bool on);
// True when oneDNN is built in and has a Winograd kernel for this CPU
// (AVX-512; not AVX2).
bool dnnl_winograd_available();

// The refusal of an operator's bfloat16 kernel without oneDNN (not built
// in, or MX_DNNL=0): bfloat16 runs on oneDNN alone (float32 sums inside; no
// emulation). Mixed-precision training checks for it before it binds
// (train/precision.h), so this is for graphs built in bfloat16 by hand.
[[noreturn]] void bf16_needs_dnnl(const char* op);

// True when oneDNN is built in and this CPU computes bfloat16 products
// natively (AVX512-BF16 or AMX): what bfloat16 inference needs to be fast.
// Without them oneDNN would emulate bfloat16 at a loss against float32.
bool dnnl_bf16_available();

// True when oneDNN is built in and may use VNNI instructions (AVX512-VNNI
// or AVX-VNNI) here, as ONEDNN_MAX_CPU_ISA allows: int8 convolutions and
// inner products are fast. Without them they are correct but slower.
bool dnnl_int8_fast();

// Sets a switch for a scope and restores it after.
template <bool (*Get)(), void (*Set)(bool)>
class ScopedSwitch {
 public:
  explicit ScopedSwitch(bool on) : saved_(Get()) { Set(on); }
  ~ScopedSwitch() { Set(saved_); }
  ScopedSwitch(const ScopedSwitch&) = delete;
  ScopedSwitch& operator=(const ScopedSwitch&) = delete;

 private:
  bool saved_;
};
using ScopedDnnl = ScopedSwitch<dnnl_enabled, set_dnnl_enabled>;
using ScopedWinograd = ScopedSwitch<dnnl_winograd_enabled, set_dnnl_winograd_enabled>;

}  // namespace mx::op

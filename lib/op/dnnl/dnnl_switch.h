// Which CPU kernels run: oneDNN's (the default when mx is built with it) or
// the OpenBLAS/im2col reference kernels. The environment variable MX_DNNL=0
// turns oneDNN off for the whole process (read once, at the first kernel
// call); tests and benchmarks flip it with ScopedDnnl to compare both.
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
// when it trains one executor per CPU device: the replicas' calls run side
// by side, each on its share of the cores.
void set_dnnl_call_threads(int threads);
int dnnl_call_threads();

// Whether oneDNN's Winograd convolution (F(4x4, 3x3)) runs the 3x3 stride-1
// convolutions it wins on (op/dnnl/dnnl_descs.h, winograd_wins): on by
// default, off with MX_DNNL_WINOGRAD=0. Its sums differ from the direct
// algorithm's by rounding (about 1e-6 of the output's scale).
bool dnnl_winograd_enabled();
void set_dnnl_winograd_enabled(bool on);
// True when oneDNN is built in and has a Winograd kernel for this CPU
// (AVX-512; not AVX2).
bool dnnl_winograd_available();

// Sets the switch for a scope and restores it after.
class ScopedDnnl {
 public:
  explicit ScopedDnnl(bool on) : saved_(dnnl_enabled()) { set_dnnl_enabled(on); }
  ~ScopedDnnl() { set_dnnl_enabled(saved_); }
  ScopedDnnl(const ScopedDnnl&) = delete;
  ScopedDnnl& operator=(const ScopedDnnl&) = delete;

 private:
  bool saved_;
};

// Sets the Winograd switch for a scope and restores it after.
class ScopedWinograd {
 public:
  explicit ScopedWinograd(bool on) : saved_(dnnl_winograd_enabled()) {
    set_dnnl_winograd_enabled(on);
  }
  ~ScopedWinograd() { set_dnnl_winograd_enabled(saved_); }
  ScopedWinograd(const ScopedWinograd&) = delete;
  ScopedWinograd& operator=(const ScopedWinograd&) = delete;

 private:
  bool saved_;
};

}  // namespace mx::op

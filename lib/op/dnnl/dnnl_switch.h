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

}  // namespace mx::op

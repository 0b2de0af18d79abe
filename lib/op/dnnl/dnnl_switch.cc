#include "op/dnnl/dnnl_switch.h"

#include <atomic>

#include "base/error.h"
#include "base/runtime_config.h"
#include "base/strings.h"
#if MX_USE_DNNL
#include "op/dnnl/dnnl_context.h"
#endif

namespace mx::op {
namespace {

// The process-wide switches (flags, like the engine's choice from MX_ENGINE),
// starting from the runtime configuration's MX_DNNL and MX_DNNL_WINOGRAD.
std::atomic<bool>& flag() {
  static std::atomic<bool> on{dnnl_built() && runtime_config().dnnl};
  return on;
}
std::atomic<bool>& winograd_flag() {
  static std::atomic<bool> on{dnnl_built() && runtime_config().dnnl_winograd};
  return on;
}

}  // namespace

[[noreturn]] void bf16_needs_dnnl(const char* op) {
  throw Error(
      str(op, ": bfloat16 needs mx's oneDNN kernels (built with MX_USE_DNNL, MX_DNNL not 0)"));
}

bool dnnl_built() { return MX_USE_DNNL != 0; }

bool dnnl_enabled() { return flag().load(std::memory_order_relaxed); }

void set_dnnl_enabled(bool on) { flag().store(on && dnnl_built(), std::memory_order_relaxed); }

bool dnnl_winograd_available() {
#if MX_USE_DNNL
  // Asks oneDNN for a small Winograd convolution once.
  static const bool available = [] {
    using dnnl_impl::any;
    try {
      const dnnl::memory::dims shape{1, 32, 8, 8};
      dnnl::convolution_forward::primitive_desc pd({dnnl::prop_kind::forward_training,
                                                    dnnl::algorithm::convolution_winograd,
                                                    any(shape),
                                                    any({32, 32, 3, 3}),
                                                    any(shape),
                                                    {1, 1},
                                                    {1, 1},
                                                    {1, 1}},
                                                   dnnl_impl::cpu_engine());
      return true;
    } catch (const dnnl::error&) {
      return false;  // no Winograd kernel for this CPU
    }
  }();
  return available;
#else
  return false;
#endif
}

bool dnnl_bf16_available() {
#if MX_USE_DNNL
  return dnnl::get_effective_cpu_isa() >= dnnl::cpu_isa::avx512_core_bf16;
#else
  return false;
#endif
}

bool dnnl_int8_fast() {
#if MX_USE_DNNL
  // oneDNN's ISA values are bit sets: each one holds the bits of those it extends.
  const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  const auto has = [isa](dnnl::cpu_isa want) {
    const auto bits = static_cast<unsigned>(want);
    return (isa & bits) == bits;
  };
  return has(dnnl::cpu_isa::avx512_core_vnni) || has(dnnl::cpu_isa::avx2_vnni);
#else
  return false;
#endif
}

bool dnnl_winograd_enabled() { return winograd_flag().load(std::memory_order_relaxed); }

void set_dnnl_winograd_enabled(bool on) {
  winograd_flag().store(on && dnnl_built(), std::memory_order_relaxed);
}

namespace {
std::atomic<int>& call_threads() {
  static std::atomic<int> threads{0};
  return threads;
}
}  // namespace

void set_dnnl_call_threads(int threads) {
  call_threads().store(threads > 0 ? threads : 0, std::memory_order_relaxed);
}

int dnnl_call_threads() { return call_threads().load(std::memory_order_relaxed); }

}  // namespace mx::op

#include "train/nonfinite_watch.h"

#include <cmath>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/gpu.h"
#include "base/strings.h"

namespace mx::train {

namespace {

// True when every value of the float32 array is finite. Runs inside an engine
// operation that reads `value`; a GPU array is copied over first (only on
// the error path: a blocking copy after the producer's stream has finished).
bool all_finite(const NDArray& value) {
  const float* p = value.data<float>();
  std::vector<float> host;
  if (value.ctx().is_gpu()) {
    host.resize(static_cast<size_t>(value.size()));
    gpu::copy(host.data(), value.raw_data(), value.bytes(), gpu::CopyKind::kDeviceToHost, nullptr);
    gpu::synchronize(nullptr, value.ctx().id);
    p = host.data();
  }
  for (int64_t i = 0; i < value.size(); ++i)
    if (!std::isfinite(p[i])) return false;
  return true;
}

}  // namespace

void NonFiniteWatch::watch(const NDArray& output, int64_t batch_index, Context ctx) {
  // A GPU's outputs are checked on the CPU after one copy on the copy stream.
  const NDArray checked = output.ctx().is_gpu() ? output.copy_to(Context::cpu()) : output;
  if (output.ctx().is_gpu()) ctx = Context::cpu();
  Engine::get().push(
      [out = checked, first_bad = first_bad_batch_, index = batch_index](RunContext) {
        const float* p = out.data<float>();
        for (int64_t i = 0; i < out.size(); ++i)
          if (!std::isfinite(p[i])) {
            int64_t none = -1;
            first_bad->compare_exchange_strong(none, index);
            return;
          }
      },
      ctx, {checked.var()}, {}, FnProperty::kNormal, 0, "check outputs");
}

void NonFiniteWatch::throw_if_seen(Executor& exe, int epoch) const {
  if (first_bad_batch_->load() < 0) return;
  Engine::get().wait_all();
  std::string first_layer;
  exe.set_monitor([&first_layer](const std::string& name, const NDArray& value) {
    if (!first_layer.empty() || value.dtype() != DType::kFloat32) return;
    if (!all_finite(value)) first_layer = name;
  });
  exe.forward(true);
  Engine::get().wait_all();
  exe.set_monitor(nullptr);
  throw Error(str("the loss became NaN or infinite in epoch ", epoch + 1, ", batch ",
                  first_bad_batch_->load() + 1, "; first non-finite output: ",
                  first_layer.empty() ? "(the weights)" : first_layer,
                  ". Try a smaller learning rate or gradient clipping (optimizer.clip_gradient)"));
}

}  // namespace mx::train

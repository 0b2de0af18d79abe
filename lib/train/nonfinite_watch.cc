#include "train/nonfinite_watch.h"

#include <cmath>
#include <string>

#include "base/error.h"
#include "base/strings.h"

namespace mx::train {

void NonFiniteWatch::watch(const NDArray& output, int64_t batch_index, Context ctx) {
  Engine::get().push(
      [out = output, first_bad = first_bad_batch_, index = batch_index](RunContext) {
        const float* p = out.data<float>();
        for (int64_t i = 0; i < out.size(); ++i)
          if (!std::isfinite(p[i])) {
            int64_t none = -1;
            first_bad->compare_exchange_strong(none, index);
            return;
          }
      },
      ctx, {output.var()}, {}, FnProperty::kNormal, 0, "check outputs");
}

void NonFiniteWatch::throw_if_seen(Executor& exe, int epoch) const {
  if (first_bad_batch_->load() < 0) return;
  Engine::get().wait_all();
  std::string first_layer;
  exe.set_monitor([&first_layer](const std::string& name, const NDArray& value) {
    if (!first_layer.empty() || value.dtype() != DType::kFloat32) return;
    const float* p = value.data<float>();
    for (int64_t i = 0; i < value.size(); ++i)
      if (!std::isfinite(p[i])) {
        first_layer = name;
        return;
      }
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

#include "train/aux_states.h"

#include "base/dtype.h"

namespace mx::train {
namespace {

std::vector<double> as_doubles(const NDArray& a) {
  return dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const std::vector<T> values = a.to_vector<T>();
    return std::vector<double>(values.begin(), values.end());
  });
}

NDArray from_doubles(const Shape& shape, DType dtype, const double* values) {
  return dispatch_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return NDArray::from_vector<T>(shape, std::vector<T>(values, values + shape.size()));
  });
}

}  // namespace

void average_aux_states(const std::vector<Executor*>& executors, kvstore::Coordinator& job) {
  if (executors.empty()) return;
  const auto& names = executors[0]->aux_dict();  // a map: the same order everywhere
  const int workers = job.num_workers();
  if (names.empty() || (executors.size() == 1 && workers == 1)) return;
  std::vector<double> sums;
  for (const auto& [name, first] : names) {
    const size_t at = sums.size();
    sums.resize(at + static_cast<size_t>(first.size()), 0.0);
    for (Executor* e : executors) {
      const std::vector<double> v = as_doubles(e->aux_dict().at(name));
      for (size_t i = 0; i < v.size(); ++i) sums[at + i] += v[i];
    }
  }
  sums = job.allreduce(std::move(sums), kvstore::Reduce::kSum);
  const double count = static_cast<double>(executors.size()) * workers;
  for (double& s : sums) s /= count;
  size_t at = 0;
  for (const auto& [name, first] : names) {
    const NDArray mean = from_doubles(first.shape(), first.dtype(), sums.data() + at);
    at += static_cast<size_t>(first.size());
    for (Executor* e : executors) {
      NDArray target = e->aux_dict().at(name);
      mean.copy_to(target);
    }
  }
}

void copy_aux_states(const std::vector<Executor*>& executors) {
  for (size_t k = 1; k < executors.size(); ++k)
    for (const auto& [name, source] : executors[0]->aux_dict()) {
      NDArray target = executors[k]->aux_dict().at(name);
      source.copy_to(target);
    }
}

}  // namespace mx::train

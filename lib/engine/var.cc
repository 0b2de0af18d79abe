#include "engine/var.h"

#include <atomic>

namespace mx {

uint64_t Var::next_uid() {
  static std::atomic<uint64_t> counter{0};
  return ++counter;
}

bool Var::append_read(Operation* op) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!running_write_ && queue_.empty()) {
    ++running_reads_;
    return true;
  }
  queue_.push_back({op, false});
  return false;
}

bool Var::append_write(Operation* op) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!running_write_ && running_reads_ == 0 && queue_.empty()) {
    running_write_ = true;
    return true;
  }
  queue_.push_back({op, true});
  return false;
}

void Var::release_front_locked(std::vector<Operation*>& released) {
  // Either a run of reads, or one write when nothing else is running.
  while (!queue_.empty() && !queue_.front().is_write) {
    released.push_back(queue_.front().op);
    queue_.pop_front();
    ++running_reads_;
  }
  if (running_reads_ == 0 && !queue_.empty() && queue_.front().is_write) {
    released.push_back(queue_.front().op);
    queue_.pop_front();
    running_write_ = true;
  }
}

void Var::complete_read(std::vector<Operation*>& released, GpuEventPtr queued) {
  std::lock_guard<std::mutex> lock(mutex_);
  fence_.read_finished(std::move(queued));
  --running_reads_;
  if (running_reads_ == 0) release_front_locked(released);
}

void Var::complete_write(std::exception_ptr error, std::vector<Operation*>& released,
                         GpuEventPtr queued) {
  std::lock_guard<std::mutex> lock(mutex_);
  fence_.write_finished(std::move(queued));
  running_write_ = false;
  ++version_;
  exception_ = std::move(error);
  release_front_locked(released);
}

std::vector<GpuEventPtr> Var::gpu_work_to_wait(const void* stream, bool for_write) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return fence_.to_wait(stream, for_write);
}

std::exception_ptr Var::exception() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return exception_;
}

uint64_t Var::version() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return version_;
}

}  // namespace mx

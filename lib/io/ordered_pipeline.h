// A producer thread, N worker threads and a consumer: items are produced in
// order, transformed in parallel, and handed to the consumer in the order
// they were produced, at most `capacity` of them in flight. This is how
// batches are decoded ahead of the trainer and how mx-pack encodes images on
// several threads but writes them in list order.
//
// An exception from produce() or transform() reaches the consumer at the
// position where it happened; items before it are delivered first.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

namespace mx {

template <typename In, typename Out>
class OrderedPipeline {
 public:
  // Called on the producer thread; nullopt ends the stream.
  using Produce = std::function<std::optional<In>()>;
  // Called on worker threads with the worker's number (for per-thread scratch).
  using Transform = std::function<Out(In&&, int worker)>;

  OrderedPipeline(Produce produce, Transform transform, int workers, int capacity)
      : produce_(std::move(produce)),
        transform_(std::move(transform)),
        capacity_(capacity < 1 ? 1 : capacity) {
    producer_ = std::thread([this] { produce_loop(); });
    for (int w = 0; w < (workers < 1 ? 1 : workers); ++w)
      workers_.emplace_back([this, w] { work_loop(w); });
  }

  ~OrderedPipeline() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    space_.notify_all();
    work_.notify_all();
    done_.notify_all();
    producer_.join();
    for (auto& t : workers_) t.join();
  }

  OrderedPipeline(const OrderedPipeline&) = delete;
  OrderedPipeline& operator=(const OrderedPipeline&) = delete;

  // The next result in production order; nullopt after the last one.
  std::optional<Out> next() {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] {
      return results_.count(consumed_) != 0 || (finished_ && consumed_ == produced_);
    });
    auto it = results_.find(consumed_);
    if (it == results_.end()) {
      if (producer_error_) std::rethrow_exception(std::exchange(producer_error_, nullptr));
      return std::nullopt;
    }
    Result result = std::move(it->second);
    results_.erase(it);
    ++consumed_;
    lock.unlock();
    space_.notify_one();
    if (result.error) std::rethrow_exception(result.error);
    return std::move(result.value);
  }

 private:
  struct Result {
    std::optional<Out> value;
    std::exception_ptr error;
  };

  void produce_loop() {
    while (true) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        space_.wait(lock, [&] { return stop_ || produced_ - consumed_ < capacity_; });
        if (stop_) return;
      }
      std::optional<In> item;
      std::exception_ptr error;
      try {
        item = produce_();
      } catch (...) {
        error = std::current_exception();
      }
      std::lock_guard<std::mutex> lock(mutex_);
      if (!item) {
        producer_error_ = error;
        finished_ = true;
        work_.notify_all();
        done_.notify_all();
        return;
      }
      inputs_.emplace_back(produced_++, std::move(*item));
      work_.notify_one();
    }
  }

  void work_loop(int worker) {
    while (true) {
      std::optional<std::pair<uint64_t, In>> job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        work_.wait(lock, [&] { return stop_ || !inputs_.empty() || finished_; });
        if (stop_ || inputs_.empty()) return;
        job.emplace(std::move(inputs_.front()));
        inputs_.pop_front();
      }
      Result result;
      try {
        result.value.emplace(transform_(std::move(job->second), worker));
      } catch (...) {
        result.error = std::current_exception();
      }
      {
        std::lock_guard<std::mutex> lock(mutex_);
        results_.emplace(job->first, std::move(result));
      }
      done_.notify_all();
    }
  }

  Produce produce_;
  Transform transform_;
  const uint64_t capacity_;

  std::mutex mutex_;
  std::condition_variable space_, work_, done_;
  std::deque<std::pair<uint64_t, In>> inputs_;
  std::map<uint64_t, Result> results_;
  uint64_t produced_ = 0, consumed_ = 0;
  bool finished_ = false, stop_ = false;
  std::exception_ptr producer_error_;
  std::thread producer_;
  std::vector<std::thread> workers_;
};

}  // namespace mx

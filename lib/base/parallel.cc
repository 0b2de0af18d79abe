#include "base/parallel.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "base/threads.h"

namespace mx {
namespace {

thread_local bool inside_parallel_for = false;

struct Job {
  const std::function<void(int64_t, int64_t)>* fn;
  int64_t n, chunk;
  int64_t num_chunks;
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> done{0};
  std::mutex mutex;
  std::condition_variable finished;
  std::exception_ptr error;

  // Runs chunks until none is left; returns after its last one.
  void work() {
    for (;;) {
      int64_t c = next.fetch_add(1);
      if (c >= num_chunks) return;
      int64_t begin = c * chunk, end = std::min(n, begin + chunk);
      try {
        (*fn)(begin, end);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex);
        if (!error) error = std::current_exception();
      }
      if (done.fetch_add(1) + 1 == num_chunks) {
        std::lock_guard<std::mutex> lock(mutex);
        finished.notify_all();
      }
    }
  }
};

// Helper threads that join the jobs of parallel_for calls. Part of the
// process-wide thread budget, like the engine's workers.
class Pool {
 public:
  static Pool& get() {
    // Never destroyed: engine operations still running while the program
    // exits (the engine drains in its destructor) call parallel_for.
    static Pool& pool = *new Pool(thread_budget() - 1);
    return pool;
  }
  int size() const { return static_cast<int>(threads_.size()); }

  void offer(const std::shared_ptr<Job>& job, int helpers) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (int i = 0; i < helpers; ++i) jobs_.push_back(job);
    }
    if (helpers == 1)
      ready_.notify_one();
    else
      ready_.notify_all();
  }

 private:
  explicit Pool(int threads) {
    for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { run(); });
  }
  void run() {
    inside_parallel_for = true;
    for (;;) {
      std::shared_ptr<Job> job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        ready_.wait(lock, [this] { return !jobs_.empty(); });
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job->work();
    }
  }

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::shared_ptr<Job>> jobs_;
  std::vector<std::thread> threads_;
};

}  // namespace

int parallel_threads() { return Pool::get().size() + 1; }

bool in_parallel_for() { return inside_parallel_for; }

void parallel_for(int64_t n, int64_t min_chunk, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  min_chunk = std::max<int64_t>(1, min_chunk);
  const int threads = parallel_threads();
  if (inside_parallel_for || threads == 1 || n < 2 * min_chunk) {
    fn(0, n);
    return;
  }
  auto job = std::make_shared<Job>();
  job->fn = &fn;
  job->n = n;
  // About one chunk per thread: fewest hand-overs, and even splits of a batch.
  job->num_chunks = std::min<int64_t>(threads, n / min_chunk);
  job->chunk = (n + job->num_chunks - 1) / job->num_chunks;
  job->num_chunks = (n + job->chunk - 1) / job->chunk;
  Pool::get().offer(job, static_cast<int>(std::min<int64_t>(threads - 1, job->num_chunks - 1)));
  inside_parallel_for = true;
  job->work();
  inside_parallel_for = false;
  {
    std::unique_lock<std::mutex> lock(job->mutex);
    job->finished.wait(lock, [&] { return job->done.load() == job->num_chunks; });
  }
  if (job->error) std::rethrow_exception(job->error);
}

}  // namespace mx

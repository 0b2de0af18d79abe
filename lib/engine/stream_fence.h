// What GPU work an engine variable's finished operations may still have
// queued. A GPU operation counts as finished once its kernels are queued on
// its stream (the engine does not wait for them): work queued later on the
// same stream runs after them anyway, so only an operation elsewhere (on
// another stream, or on the host) has to wait, and only for the events of
// the operations it depends on. This keeps the GPU busy while the host
// queues the next operations (MXNet 1.x's engine does the same with events).
//
// A reader waits for the last write; a writer waits for the last write and
// for the reads since, as the engine's own ordering does for the host.
// `Event` has `stream()` (a template so the rules are tested without a GPU).
#pragma once

#include <memory>
#include <vector>

namespace mx {

template <typename Event>
class StreamFence {
 public:
  using EventPtr = std::shared_ptr<const Event>;

  // The events an operation on `stream` (nullptr: the host) waits for before
  // it reads the variable, or writes it (`for_write`). Events of its own
  // stream are left out: the stream already orders them.
  std::vector<EventPtr> to_wait(const void* stream, bool for_write) const {
    std::vector<EventPtr> out;
    const auto add = [&](const EventPtr& e) {
      if (e && (stream == nullptr || e->stream() != stream)) out.push_back(e);
    };
    add(last_write_);
    if (for_write)
      for (const EventPtr& r : reads_) add(r);
    return out;
  }

  // A read finished; `queued` is the GPU work it left (nullptr: none, a host
  // read). One event per stream is kept: a later one covers an earlier one.
  void read_finished(EventPtr queued) {
    if (!queued) return;
    for (EventPtr& r : reads_) {
      if (r->stream() == queued->stream()) {
        r = std::move(queued);
        return;
      }
    }
    reads_.push_back(std::move(queued));
  }

  // A write finished; it waited for everything before it (to_wait), so only
  // its own queued work (nullptr: none) is left to wait for.
  void write_finished(EventPtr queued) {
    reads_.clear();
    last_write_ = std::move(queued);
  }

  bool empty() const { return !last_write_ && reads_.empty(); }

 private:
  EventPtr last_write_;
  std::vector<EventPtr> reads_;
};

}  // namespace mx

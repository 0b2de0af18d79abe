// Autograd's two switches, per thread as in MXNet: whether imperative
// operator calls are recorded for a later backward pass, and whether they
// run in training mode (Dropout drops, BatchNorm uses batch statistics).
// Per thread, so that threads doing inference are not recorded because
// another thread trains; the only state autograd keeps outside the arrays.
#pragma once

namespace mx::autograd {

bool is_recording();
bool is_training();
// Set this thread's switch; return its previous value.
bool set_recording(bool on);
bool set_training(bool on);

// Recording (and training mode, as MXNet's autograd.record(train_mode=True))
// for a scope; the previous switches come back at its end.
class RecordScope {
 public:
  explicit RecordScope(bool training = true)
      : was_recording_(set_recording(true)), was_training_(set_training(training)) {}
  ~RecordScope() {
    set_recording(was_recording_);
    set_training(was_training_);
  }
  RecordScope(const RecordScope&) = delete;
  RecordScope& operator=(const RecordScope&) = delete;

 private:
  bool was_recording_, was_training_;
};

}  // namespace mx::autograd

#include "autograd/mode.h"

namespace mx::autograd {
namespace {

struct Switches {
  bool recording = false;
  bool training = false;
};

Switches& switches() {
  thread_local Switches s;
  return s;
}

}  // namespace

bool is_recording() { return switches().recording; }
bool is_training() { return switches().training; }

bool set_recording(bool on) {
  const bool previous = switches().recording;
  switches().recording = on;
  return previous;
}

bool set_training(bool on) {
  const bool previous = switches().training;
  switches().training = on;
  return previous;
}

}  // namespace mx::autograd

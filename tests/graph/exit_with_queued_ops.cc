// A program that returns from main while the engine still has a network's
// training steps queued: the engine finishes them in its destructor, among
// the program's static objects. Those operations use what kernels use when
// they run: the operator registry, temporary space, the random generator,
// parallel_for and the storage pools. These must still exist then (they are
// never destroyed); when they were destroyed before the engine, the queued
// operations ran on freed memory ("corrupted double-linked list" at the end
// of some mx-train runs). Under valgrind (exit_with_queued_ops_valgrind)
// every such use fails the test; a normal build fails only now and then.
#include <chrono>
#include <cstdio>
#include <thread>

#include "engine/engine.h"
#include "executor/executor.h"

using namespace mx;
using graph::Symbol;

int main() {
  const Symbol data = Symbol::variable("data");
  Symbol net =
      Symbol::create("Convolution", "conv",
                     {{"kernel", "(3, 3)"}, {"num_filter", "8"}, {"pad", "(1, 1)"}}, {data});
  net = Symbol::create("Dropout", "drop", {{"p", "0.5"}}, {net});
  net = Symbol::create("FullyConnected", "fc", {{"num_hidden", "4"}}, {net});
  net = Symbol::create("SoftmaxOutput", "softmax", {}, {net});
  BindOptions options;
  options.for_training = true;
  auto exe = Executor::simple_bind(net, {{"data", Shape{16, 3, 24, 24}}}, options);

  // Hold every step back behind a slow write of the input, so that they are
  // all still queued when main returns.
  NDArray input = exe->arg_dict().at("data");
  Engine::get().push(
      [input](RunContext) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        float* x = input.data<float>();
        for (int64_t i = 0; i < input.size(); ++i) x[i] = static_cast<float>(i % 7) - 3.0f;
      },
      Context::cpu(), {}, {input.var()}, FnProperty::kNormal, 0, "slow input");
  for (int step = 0; step < 3; ++step) {
    exe->forward(true);
    exe->backward();
  }
  const int64_t queued = Engine::get().pending();
  std::printf("returning with %lld engine operations queued\n", static_cast<long long>(queued));
  return queued > 0 ? 0 : 1;  // nothing queued: the test would show nothing
}

// The memory table of the MXNet paper (figure 7): internal memory (activations,
// their gradients; not the parameters) of AlexNet, VGG-16, GoogLeNet and
// ResNet-50 at batch 64 with naive allocation, in-place only, co-share only,
// both, and both + mirroring, for training and for inference. Planning only:
// nothing is allocated.
//   bench_memory [--batch N]
#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/error.h"
#include "base/strings.h"
#include "executor/executor.h"
#include "networks.h"

using namespace mx;

namespace {

double mib(size_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

size_t planned(const graph::Symbol& net, int batch, bool training, bool inplace, bool coshare,
               graph::MirrorPolicy mirror = graph::MirrorPolicy::kNone) {
  BindOptions o;
  o.for_training = training;
  o.memory.inplace = inplace;
  o.memory.coshare = coshare;
  o.mirror = mirror;
  o.grad_req = {{"data", graph::GradReq::kNull}, {"softmax_label", graph::GradReq::kNull}};
  return Executor::plan_only(net, {{"data", Shape{batch, 3, 224, 224}}}, o).planned_internal_bytes;
}

}  // namespace

int run(int argc, char** argv) {
  int batch = 64;
  for (int i = 1; i + 1 < argc; i += 2)
    if (std::string(argv[i]) == "--batch") batch = std::atoi(argv[i + 1]);
  if (batch < 1) {
    std::fprintf(stderr, "usage: bench_memory [--batch N]\n");
    return 2;
  }
  std::printf(
      "internal memory (MiB) at batch %d, 224x224 input, float32; parameters not counted\n\n",
      batch);
  for (bool training : {true, false}) {
    std::printf("%s\n", training ? "training (forward + backward)" : "inference (forward only)");
    std::printf(
        "| network | naive | in-place | co-share | both | both + mirror | both / naive |\n");
    std::printf("| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (const auto& [name, net] : bench::paper_networks()) {
      size_t naive = planned(net, batch, training, false, false);
      size_t inplace = planned(net, batch, training, true, false);
      size_t coshare = planned(net, batch, training, false, true);
      size_t both = planned(net, batch, training, true, true);
      std::string mirror = "-";
      if (training) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.0f",
                      mib(planned(net, batch, training, true, true, graph::MirrorPolicy::kCheap)));
        mirror = buf;
      }
      std::printf("| %s | %.0f | %.0f | %.0f | %.0f | %s | %.2f |\n", name.c_str(), mib(naive),
                  mib(inplace), mib(coshare), mib(both), mirror.c_str(),
                  static_cast<double>(both) / static_cast<double>(naive));
    }
    std::printf("\n");
  }
  return 0;
}

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const Error& e) {
    std::fprintf(stderr, "bench_memory: %s\n", e.what());
    return e.exit_code();
  }
}

// The image classifiers of the MXNet paper's memory figure, built with the
// Symbol API: AlexNet, VGG-16, GoogLeNet (Inception v1) and ResNet-50.
#pragma once

#include <string>
#include <vector>

#include "graph/symbol.h"

namespace mx::bench {

graph::Symbol alexnet(int classes = 1000);
graph::Symbol vgg16(int classes = 1000);
graph::Symbol googlenet(int classes = 1000);
graph::Symbol resnet50(int classes = 1000);

struct NamedNetwork {
  std::string name;
  graph::Symbol symbol;
};
std::vector<NamedNetwork> paper_networks();

}  // namespace mx::bench

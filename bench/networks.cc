#include "networks.h"

namespace mx::bench {
namespace {

using graph::Symbol;
using Attrs = std::map<std::string, std::string>;

Symbol conv(const Symbol& x, const std::string& name, int filters, int kernel, int stride = 1,
            int pad = 0, bool bias = true) {
  auto k = std::to_string(kernel), s = std::to_string(stride), p = std::to_string(pad);
  return Symbol::create("Convolution", name,
                        {{"num_filter", std::to_string(filters)},
                         {"kernel", "(" + k + ", " + k + ")"},
                         {"stride", "(" + s + ", " + s + ")"},
                         {"pad", "(" + p + ", " + p + ")"},
                         {"no_bias", bias ? "False" : "True"}},
                        {x});
}
Symbol relu(const Symbol& x, const std::string& name) {
  return Symbol::create("Activation", name, {{"act_type", "relu"}}, {x});
}
Symbol pool(const Symbol& x, const std::string& name, const char* type, int kernel, int stride,
            int pad = 0) {
  auto k = std::to_string(kernel), s = std::to_string(stride), p = std::to_string(pad);
  return Symbol::create("Pooling", name,
                        {{"pool_type", type},
                         {"kernel", "(" + k + ", " + k + ")"},
                         {"stride", "(" + s + ", " + s + ")"},
                         {"pad", "(" + p + ", " + p + ")"}},
                        {x});
}
Symbol global_pool(const Symbol& x, const std::string& name) {
  return Symbol::create("Pooling", name,
                        {{"pool_type", "avg"}, {"global_pool", "True"}, {"kernel", "(1, 1)"}}, {x});
}
Symbol fc(const Symbol& x, const std::string& name, int hidden) {
  return Symbol::create("FullyConnected", name, {{"num_hidden", std::to_string(hidden)}}, {x});
}
Symbol dropout(const Symbol& x, const std::string& name) {
  return Symbol::create("Dropout", name, {{"p", "0.5"}}, {x});
}
Symbol softmax(const Symbol& x) { return Symbol::create("SoftmaxOutput", "softmax", {}, {x}); }

Symbol conv_relu(const Symbol& x, const std::string& name, int filters, int kernel, int stride = 1,
                 int pad = 0) {
  return relu(conv(x, name, filters, kernel, stride, pad), name + "_relu");
}

Symbol inception(const Symbol& x, const std::string& name, int c1, int c3r, int c3, int c5r, int c5,
                 int proj) {
  Symbol b1 = conv_relu(x, name + "_1x1", c1, 1);
  Symbol b2 = conv_relu(conv_relu(x, name + "_3x3_reduce", c3r, 1), name + "_3x3", c3, 3, 1, 1);
  Symbol b3 = conv_relu(conv_relu(x, name + "_5x5_reduce", c5r, 1), name + "_5x5", c5, 5, 1, 2);
  Symbol b4 = conv_relu(pool(x, name + "_pool", "max", 3, 1, 1), name + "_pool_proj", proj, 1);
  return Symbol::create("Concat", name + "_concat", {{"num_args", "4"}, {"dim", "1"}},
                        {b1, b2, b3, b4});
}

Symbol bn(const Symbol& x, const std::string& name) {
  return Symbol::create("BatchNorm", name, {{"fix_gamma", "False"}, {"eps", "2e-5"}}, {x});
}

Symbol bottleneck(const Symbol& x, const std::string& name, int filters, int stride, bool project) {
  Symbol a = relu(bn(conv(x, name + "_conv1", filters / 4, 1, 1, 0, false), name + "_bn1"),
                  name + "_relu1");
  Symbol b = relu(bn(conv(a, name + "_conv2", filters / 4, 3, stride, 1, false), name + "_bn2"),
                  name + "_relu2");
  Symbol c = bn(conv(b, name + "_conv3", filters, 1, 1, 0, false), name + "_bn3");
  Symbol shortcut =
      project ? bn(conv(x, name + "_sc", filters, 1, stride, 0, false), name + "_sc_bn") : x;
  return relu(Symbol::create("elemwise_add", name + "_add", {}, {c, shortcut}), name + "_relu");
}

}  // namespace

Symbol alexnet(int classes) {
  Symbol x = Symbol::variable("data");
  x = conv_relu(x, "conv1", 96, 11, 4);
  x = Symbol::create("LRN", "lrn1",
                     {{"alpha", "0.0001"}, {"beta", "0.75"}, {"knorm", "2"}, {"nsize", "5"}}, {x});
  x = pool(x, "pool1", "max", 3, 2);
  x = conv_relu(x, "conv2", 256, 5, 1, 2);
  x = Symbol::create("LRN", "lrn2",
                     {{"alpha", "0.0001"}, {"beta", "0.75"}, {"knorm", "2"}, {"nsize", "5"}}, {x});
  x = pool(x, "pool2", "max", 3, 2);
  x = conv_relu(x, "conv3", 384, 3, 1, 1);
  x = conv_relu(x, "conv4", 384, 3, 1, 1);
  x = conv_relu(x, "conv5", 256, 3, 1, 1);
  x = pool(x, "pool5", "max", 3, 2);
  x = Symbol::create("Flatten", "flatten", {}, {x});
  x = dropout(relu(fc(x, "fc6", 4096), "relu6"), "drop6");
  x = dropout(relu(fc(x, "fc7", 4096), "relu7"), "drop7");
  return softmax(fc(x, "fc8", classes));
}

Symbol vgg16(int classes) {
  Symbol x = Symbol::variable("data");
  const int blocks[5][2] = {{2, 64}, {2, 128}, {3, 256}, {3, 512}, {3, 512}};
  for (int b = 0; b < 5; ++b) {
    for (int l = 0; l < blocks[b][0]; ++l)
      x = conv_relu(x, "conv" + std::to_string(b + 1) + "_" + std::to_string(l + 1), blocks[b][1],
                    3, 1, 1);
    x = pool(x, "pool" + std::to_string(b + 1), "max", 2, 2);
  }
  x = Symbol::create("Flatten", "flatten", {}, {x});
  x = dropout(relu(fc(x, "fc6", 4096), "relu6"), "drop6");
  x = dropout(relu(fc(x, "fc7", 4096), "relu7"), "drop7");
  return softmax(fc(x, "fc8", classes));
}

Symbol googlenet(int classes) {
  Symbol x = Symbol::variable("data");
  x = conv_relu(x, "conv1", 64, 7, 2, 3);
  x = pool(x, "pool1", "max", 3, 2, 1);
  x = conv_relu(x, "conv2_reduce", 64, 1);
  x = conv_relu(x, "conv2", 192, 3, 1, 1);
  x = pool(x, "pool2", "max", 3, 2, 1);
  x = inception(x, "in3a", 64, 96, 128, 16, 32, 32);
  x = inception(x, "in3b", 128, 128, 192, 32, 96, 64);
  x = pool(x, "pool3", "max", 3, 2, 1);
  x = inception(x, "in4a", 192, 96, 208, 16, 48, 64);
  x = inception(x, "in4b", 160, 112, 224, 24, 64, 64);
  x = inception(x, "in4c", 128, 128, 256, 24, 64, 64);
  x = inception(x, "in4d", 112, 144, 288, 32, 64, 64);
  x = inception(x, "in4e", 256, 160, 320, 32, 128, 128);
  x = pool(x, "pool4", "max", 3, 2, 1);
  x = inception(x, "in5a", 256, 160, 320, 32, 128, 128);
  x = inception(x, "in5b", 384, 192, 384, 48, 128, 128);
  x = global_pool(x, "pool5");
  x = Symbol::create("Flatten", "flatten", {}, {x});
  x = dropout(x, "drop5");
  return softmax(fc(x, "fc", classes));
}

Symbol resnet50(int classes) {
  Symbol x = Symbol::variable("data");
  x = relu(bn(conv(x, "conv0", 64, 7, 2, 3, false), "bn0"), "relu0");
  x = pool(x, "pool0", "max", 3, 2, 1);
  const int stages[4][2] = {{3, 256}, {4, 512}, {6, 1024}, {3, 2048}};
  for (int s = 0; s < 4; ++s)
    for (int u = 0; u < stages[s][0]; ++u)
      x = bottleneck(x, "stage" + std::to_string(s + 1) + "_unit" + std::to_string(u + 1),
                     stages[s][1], u == 0 && s > 0 ? 2 : 1, u == 0);
  x = global_pool(x, "pool1");
  x = Symbol::create("Flatten", "flatten", {}, {x});
  return softmax(fc(x, "fc1", classes));
}

std::vector<NamedNetwork> paper_networks() {
  return {{"AlexNet", alexnet()},
          {"VGG-16", vgg16()},
          {"GoogLeNet", googlenet()},
          {"ResNet-50", resnet50()}};
}

}  // namespace mx::bench

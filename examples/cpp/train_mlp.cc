// Imperative training of an MLP on Fashion-MNIST with mx's C++ API (mx.hpp):
// the network of configs/mlp-fashion-mnist.yaml (784-256-128-10, ReLU,
// softmax) written as operator calls, differentiated by autograd, and
// trained with SGD with momentum written on NDArrays, with the config's
// optimizer settings (learning rate 0.1, momentum 0.9, weight decay 1e-4 on
// the weights, gradients scaled by 1/batch, the rate times 0.2 after 3000
// and 4800 updates), Xavier initialization (gaussian, fan-in, magnitude 2)
// and 10 epochs of batches of 100.
//
//   train_mlp [--data DIR] [--epochs N] [--max-batches N] [--seed N]
//
// DIR holds the IDX files of Debian's dataset-fashion-mnist package (the
// configs' data, default /usr/share/datasets/fashion-mnist). --max-batches
// stops each epoch early (for a quick check). Prints each epoch's training
// and validation accuracy; the last line is "validation accuracy X".
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <mx/mx.hpp>
#include <random>
#include <string>
#include <vector>

namespace {

struct Options {
  std::string data = "/usr/share/datasets/fashion-mnist";
  int epochs = 10;
  long max_batches = -1;  // per epoch; -1: all
  int seed = 1;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) throw std::runtime_error("train_mlp: " + arg + " needs a value");
    const std::string value = argv[++i];
    if (arg == "--data")
      o.data = value;
    else if (arg == "--epochs")
      o.epochs = std::stoi(value);
    else if (arg == "--max-batches")
      o.max_batches = std::stol(value);
    else if (arg == "--seed")
      o.seed = std::stoi(value);
    else
      throw std::runtime_error("train_mlp: unknown option " + arg +
                               " (--data, --epochs, --max-batches, --seed)");
  }
  return o;
}

constexpr int kBatch = 100;
constexpr float kMomentum = 0.9f, kWeightDecay = 1e-4f;

// A parameter with its gradient buffer (autograd) and momentum.
struct Param {
  mx::NDArray value, momentum;
  float wd = 0;  // weight decay: weights only, as MXNet's default wd_mult
};

Param weight(mx_uint out, mx_uint in, std::mt19937& rng) {
  // Xavier, gaussian, fan-in, magnitude 2: N(0, sqrt(2 / in)).
  std::normal_distribution<float> normal(0.0f, std::sqrt(2.0f / static_cast<float>(in)));
  std::vector<float> v(static_cast<size_t>(out) * in);
  for (float& x : v) x = normal(rng);
  Param p{mx::NDArray::from_vector(v, {out, in}), mx::NDArray::zeros({out, in}), kWeightDecay};
  p.value.attach_grad();
  return p;
}

Param bias(mx_uint out) {
  Param p{mx::NDArray::zeros({out}), mx::NDArray::zeros({out}), 0};
  p.value.attach_grad();
  return p;
}

struct Mlp {
  std::vector<Param> params;  // fc1 weight, bias, fc2 ..., fc3 ...

  explicit Mlp(std::mt19937& rng) {
    const mx_uint sizes[] = {784, 256, 128, 10};
    for (int l = 0; l < 3; ++l) {
      params.push_back(weight(sizes[l + 1], sizes[l], rng));
      params.push_back(bias(sizes[l + 1]));
    }
  }

  // The scores of a batch (before the softmax).
  mx::NDArray scores(const mx::NDArray& x) const {
    mx::NDArray h = x;
    for (int l = 0; l < 3; ++l) {
      const auto& w = params[2 * l].value;
      h = mx::op("FullyConnected", {h, w, params[2 * l + 1].value},
                 {{"num_hidden", std::to_string(w.shape()[0])}});
      if (l < 2) h = mx::op("Activation", {h}, {{"act_type", "relu"}});
    }
    return h;
  }

  // SGD with momentum, MXNet's formula: m = 0.9 m - lr (g / batch + wd w); w += m.
  void sgd_step(float lr) {
    for (Param& p : params) {
      mx::NDArray step = p.value.grad() * (lr / kBatch);
      if (p.wd != 0) step += p.value * (lr * p.wd);
      p.momentum *= kMomentum;
      p.momentum -= step;
      p.value += p.momentum;
    }
  }
};

// Correct predictions among the first `count` rows of a batch.
int correct(const mx::NDArray& scores, const mx::NDArray& label, int count) {
  const auto predicted = mx::op("argmax", {scores}, {{"axis", "1"}}).to_vector();
  const auto truth = label.to_vector();
  int right = 0;
  for (int i = 0; i < count; ++i) right += predicted[i] == truth[i] ? 1 : 0;
  return right;
}

mx::DataIter mnist(const std::string& dir, const std::string& part, bool shuffle, int seed) {
  return mx::DataIter("MNISTIter", {{"image", dir + "/" + part + "-images-idx3-ubyte.gz"},
                                    {"label", dir + "/" + part + "-labels-idx1-ubyte.gz"},
                                    {"batch_size", std::to_string(kBatch)},
                                    {"flat", "True"},
                                    {"shuffle", shuffle ? "True" : "False"},
                                    {"seed", std::to_string(seed)},
                                    {"silent", "True"}});
}

double validate(const Mlp& net, mx::DataIter& val) {
  val.reset();
  long right = 0, total = 0;
  while (val.next()) {
    const int count = kBatch - val.pad();
    right += correct(net.scores(val.data()), val.label(), count);
    total += count;
  }
  return static_cast<double>(right) / static_cast<double>(total);
}

// MXNet's MultiFactorScheduler with step [3000, 4800], factor 0.2.
float learning_rate(long update) {
  float lr = 0.1f;
  for (long step : {3000L, 4800L})
    if (update > step) lr *= 0.2f;
  return lr;
}

}  // namespace

int main(int argc, char** argv) try {
  const Options opt = parse(argc, argv);
  mx::random_seed(opt.seed);
  std::mt19937 rng(static_cast<unsigned>(opt.seed));
  Mlp net(rng);
  mx::DataIter train = mnist(opt.data, "train", true, opt.seed);
  mx::DataIter val = mnist(opt.data, "t10k", false, 0);
  long updates = 0;
  double accuracy = 0;
  for (int epoch = 0; epoch < opt.epochs; ++epoch) {
    const auto start = std::chrono::steady_clock::now();
    if (epoch > 0) train.reset();
    long right = 0, total = 0;
    for (long b = 0; (opt.max_batches < 0 || b < opt.max_batches) && train.next(); ++b) {
      const mx::NDArray x = train.data(), label = train.label();
      mx::NDArray out;
      {
        mx::autograd::record recording;
        out = mx::op("SoftmaxOutput", {net.scores(x), label});
      }
      out.backward();
      net.sgd_step(learning_rate(++updates));
      const int count = kBatch - train.pad();
      right += correct(out, label, count);
      total += count;
    }
    accuracy = validate(net, val);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("epoch %d: training accuracy %.4f, validation accuracy %.4f (%.1f s)\n", epoch + 1,
                static_cast<double>(right) / static_cast<double>(total), accuracy, seconds);
    std::fflush(stdout);
  }
  std::printf("validation accuracy %.4f\n", accuracy);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}

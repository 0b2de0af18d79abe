// The C prediction API (include/mx/c_predict_api.h) as a C program calls
// it: outputs equal train::Predictor's (what mx-predict runs) on the same
// checkpoint and MXNet 1.9.1's on its own Gluon exports; reshape, partial
// outputs, types, lists; every failure returns -1 with a message naming what
// is wrong, per thread; predictors owned by separate threads run together.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "base/gpu.h"
#include "mx/c_predict_api.h"
#include "ndarray/params_io.h"
#include "train/predictor.h"
#if MX_HAVE_ONNX
#include "onnx/tensor_proto.h"
#endif

using namespace mx;

namespace {

const std::string kOnnx = std::string(MX_FIXTURES_DIR) + "/onnx/";
// An mx checkpoint: LeNet for 1x28x28 Fashion-MNIST images, 10 classes.
const std::string kLenet = kOnnx + "lenet/model";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<float> random_values(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(0.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// A checkpoint's files as the C API takes them, and a predictor made of them.
struct Model {
  std::string json, params;
  explicit Model(const std::string& prefix, const std::string& epoch = "0001")
      : json(read_file(prefix + "-symbol.json")),
        params(read_file(prefix + "-" + epoch + ".params")) {}

  int create(std::vector<mx_uint> shape, PredictorHandle* out, const char* key = "data") const {
    const char* keys[] = {key};
    const mx_uint indptr[] = {0, static_cast<mx_uint>(shape.size())};
    return MXPredCreate(json.c_str(), params.data(), static_cast<int>(params.size()), 1, 0, 1, keys,
                        indptr, shape.data(), out);
  }
  PredictorHandle make(std::vector<mx_uint> shape) const {
    PredictorHandle h = nullptr;
    REQUIRE_MESSAGE(create(std::move(shape), &h) == 0, MXGetLastError());
    return h;
  }
};

// Sets "data", runs, and returns output `index`.
std::vector<float> run(PredictorHandle h, const std::vector<float>& input, mx_uint index = 0) {
  REQUIRE_MESSAGE(MXPredSetInput(h, "data", input.data(), static_cast<mx_uint>(input.size())) == 0,
                  MXGetLastError());
  REQUIRE_MESSAGE(MXPredForward(h) == 0, MXGetLastError());
  mx_uint* shape = nullptr;
  mx_uint ndim = 0;
  REQUIRE_MESSAGE(MXPredGetOutputShape(h, index, &shape, &ndim) == 0, MXGetLastError());
  size_t size = 1;
  for (mx_uint i = 0; i < ndim; ++i) size *= shape[i];
  std::vector<float> out(size);
  REQUIRE_MESSAGE(MXPredGetOutput(h, index, out.data(), static_cast<mx_uint>(size)) == 0,
                  MXGetLastError());
  return out;
}

void check_close(const std::vector<float>& got, const std::vector<float>& want, float tol) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element ", i, ": ", got[i], " vs ", want[i]);
    REQUIRE(std::fabs(got[i] - want[i]) <= tol + tol * std::fabs(want[i]));
  }
}

std::string last_error() { return MXGetLastError(); }

}  // namespace

TEST_CASE("the predict API gives train::Predictor's outputs on the same checkpoint") {
  const Model lenet(kLenet);
  PredictorHandle h = lenet.make({3, 1, 28, 28});
  const std::vector<float> input = random_values(3 * 28 * 28, 1);
  const std::vector<float> got = run(h, input);

  train::Predictor reference(kLenet + "-0001", std::nullopt, Context::cpu());
  NDArray batch = NDArray::from_vector(Shape({3, 1, 28, 28}), input);
  const std::vector<float> want = reference.predict(batch).to_vector<float>();
  CHECK(got == want);  // the same bound graph: the same bits

  // Running again on new values gives the new outputs (the input is copied in).
  const std::vector<float> input2 = random_values(3 * 28 * 28, 2);
  CHECK(run(h, input2) ==
        reference.predict(NDArray::from_vector(Shape({3, 1, 28, 28}), input2)).to_vector<float>());
  CHECK(MXPredFree(h) == 0);
}

#if MX_HAVE_ONNX
TEST_CASE("the predict API gives MXNet 1.9.1's outputs on its Gluon model-zoo exports") {
  for (const char* name : {"gluon_resnet_v1", "gluon_resnet_v2", "gluon_mobilenet"}) {
    CAPTURE(name);
    const std::string dir = kOnnx + name;
    const Model model(dir + "/model", "0000");  // BatchNorm statistics are aux: arrays
    const std::string pb = dir + "/input_0.pb";
    const std::vector<float> input =
        mx::onnx::tensor_to_array(mx::onnx::read_tensor_file(pb), pb).to_vector<float>();
    PredictorHandle h = model.make({1, 3, 32, 32});
    const std::vector<float> want =
        load_params(dir + "/mxnet_output.params").get("output").to_vector<float>();
    check_close(run(h, input), want, 1e-4f);
    CHECK(MXPredFree(h) == 0);
  }
}
#endif

TEST_CASE("dev_type 2 runs on the GPU where there is one, and says why not elsewhere") {
  const Model lenet(kLenet);
  const char* keys[] = {"data"};
  const mx_uint indptr[] = {0, 4}, shape[] = {4, 1, 28, 28};
  PredictorHandle h = nullptr;
  const int code =
      MXPredCreate(lenet.json.c_str(), lenet.params.data(), static_cast<int>(lenet.params.size()),
                   2, 0, 1, keys, indptr, shape, &h);
  if (gpu::device_count() == 0) {
    CHECK(code == -1);
    CHECK(last_error().rfind("MXPredCreate: ", 0) == 0);
    CHECK(last_error().find("gpu") != std::string::npos);  // "no CUDA support", "not usable", ...
    return;
  }
  REQUIRE_MESSAGE(code == 0, MXGetLastError());
  const std::vector<float> input = random_values(4 * 784, 7);
  PredictorHandle cpu = lenet.make({4, 1, 28, 28});
  check_close(run(h, input), run(cpu, input), 1e-5f);
  CHECK(MXPredFree(h) == 0);
  CHECK(MXPredFree(cpu) == 0);
}

TEST_CASE("output shapes and types, reshape to another batch, partial forward") {
  const Model lenet(kLenet);
  PredictorHandle h = lenet.make({2, 1, 28, 28});
  mx_uint* shape = nullptr;
  mx_uint ndim = 0;
  REQUIRE(MXPredGetOutputShape(h, 0, &shape, &ndim) == 0);
  CHECK(std::vector<mx_uint>(shape, shape + ndim) == std::vector<mx_uint>{2, 10});
  int dtype = -1;
  REQUIRE(MXPredGetOutputType(h, 0, &dtype) == 0);
  CHECK(dtype == 0);

  const std::vector<float> input = random_values(5 * 784, 3);
  const std::vector<float> first_two(input.begin(), input.begin() + 2 * 784);
  const std::vector<float> small = run(h, first_two);

  const char* keys[] = {"data"};
  const mx_uint indptr[] = {0, 4}, five[] = {5, 1, 28, 28};
  PredictorHandle big = nullptr;
  REQUIRE_MESSAGE(MXPredReshape(1, keys, indptr, five, h, &big) == 0, MXGetLastError());
  const std::vector<float> large = run(big, input);
  REQUIRE(large.size() == 50);
  check_close(std::vector<float>(large.begin(), large.begin() + 20), small, 1e-6f);
  // The original stays usable, and the two are independent.
  CHECK(run(h, first_two) == small);
  CHECK(MXPredFree(big) == 0);

  // Partial forward: the whole network is step 0.
  const std::vector<float> other = random_values(2 * 784, 4);
  REQUIRE(MXPredSetInput(h, "data", other.data(), 2 * 784) == 0);
  int left = -1;
  for (int step = 0; left != 0; ++step) REQUIRE(MXPredPartialForward(h, step, &left) == 0);
  std::vector<float> out(20);
  REQUIRE(MXPredGetOutput(h, 0, out.data(), 20) == 0);
  CHECK(out == run(h, other));
  CHECK(MXPredFree(h) == 0);
  CHECK(MXPredFree(nullptr) == 0);
}

TEST_CASE("partial outputs name internal layers, in the order given") {
  const Model lenet(kLenet);
  const char* keys[] = {"data"};
  const mx_uint indptr[] = {0, 4}, shape[] = {2, 1, 28, 28};
  const char* outputs[] = {"fc2", "fc1_output"};  // MXNet appends "_output"; the full name works
  PredictorHandle h = nullptr;
  REQUIRE_MESSAGE(MXPredCreatePartialOut(lenet.json.c_str(), lenet.params.data(),
                                         static_cast<int>(lenet.params.size()), 1, 0, 1, keys,
                                         indptr, shape, 2, outputs, &h) == 0,
                  MXGetLastError());
  const std::vector<float> input = random_values(2 * 784, 5);
  const std::vector<float> logits = run(h, input, 0);
  mx_uint* dims = nullptr;
  mx_uint ndim = 0;
  REQUIRE(MXPredGetOutputShape(h, 1, &dims, &ndim) == 0);
  REQUIRE(ndim == 2);
  CHECK(dims[0] == 2);
  std::vector<float> hidden(2 * dims[1]);
  CHECK(MXPredGetOutput(h, 1, hidden.data(), static_cast<mx_uint>(hidden.size())) == 0);

  // The softmax of the logits is the full network's output.
  PredictorHandle full = lenet.make({2, 1, 28, 28});
  const std::vector<float> probabilities = run(full, input);
  REQUIRE(logits.size() == 20);
  for (int row = 0; row < 2; ++row) {
    float max = logits[row * 10], sum = 0;
    for (int k = 0; k < 10; ++k) max = std::max(max, logits[row * 10 + k]);
    for (int k = 0; k < 10; ++k) sum += std::exp(logits[row * 10 + k] - max);
    for (int k = 0; k < 10; ++k)
      CHECK(std::fabs(std::exp(logits[row * 10 + k] - max) / sum - probabilities[row * 10 + k]) <
            1e-5f);
  }
  CHECK(MXPredFree(h) == 0);
  CHECK(MXPredFree(full) == 0);

  const char* wrong[] = {"fc3"};
  CHECK(MXPredCreatePartialOut(lenet.json.c_str(), lenet.params.data(),
                               static_cast<int>(lenet.params.size()), 1, 0, 1, keys, indptr, shape,
                               1, wrong, &h) == -1);
  CHECK(last_error() ==
        "MXPredCreatePartialOut: output key 'fc3': the network has no output 'fc3_output' (did "
        "you mean 'fc1_output'?)");
}

TEST_CASE("bad JSON, truncated or foreign params and wrong shapes fail with a clear message") {
  const Model lenet(kLenet);
  const char* keys[] = {"data"};
  const mx_uint indptr[] = {0, 4}, shape[] = {1, 1, 28, 28};
  PredictorHandle h = reinterpret_cast<PredictorHandle>(0x1);  // must stay untouched
  auto create = [&](const std::string& json, const std::string& params,
                    const mx_uint* dims = nullptr) {
    return MXPredCreate(json.c_str(), params.data(), static_cast<int>(params.size()), 1, 0, 1, keys,
                        indptr, dims ? dims : shape, &h);
  };

  CHECK(create("{\"nodes\": [", lenet.params) == -1);
  CHECK(last_error().rfind("MXPredCreate: symbol JSON: not valid JSON at byte 12: ", 0) == 0);
  CHECK(create("{\"nodes\": []}", lenet.params) == -1);
  CHECK(last_error() == "MXPredCreate: symbol JSON: no \"heads\" (the symbol's outputs)");

  CHECK(create(lenet.json, lenet.params.substr(0, 1000)) == -1);
  CHECK(last_error() ==
        "MXPredCreate: param bytes: byte 768: array 3: shape (12, 5, 5, 5) of float32 needs 6000 "
        "bytes, but only 232 are left in the file");
  CHECK(create(lenet.json, "not a params file") == -1);
  CHECK(last_error().rfind("MXPredCreate: param bytes: byte 0: ", 0) == 0);

  const Model mlp(kOnnx + "mlp/model");
  CHECK(create(lenet.json, mlp.params) == -1);
  CHECK(last_error().rfind("MXPredCreate: the params do not fit the network with input shapes "
                           "data (1, 1, 28, 28): conv1_weight is not in the params",
                           0) == 0);
  const mx_uint small[] = {1, 1, 20, 20};
  CHECK(create(lenet.json, lenet.params, small) == -1);
  CHECK(last_error().find("fc1_weight is (") != std::string::npos);
  CHECK(last_error().find(" in the params but the network needs (") != std::string::npos);

  const char* typo[] = {"dta"};
  CHECK(MXPredCreate(lenet.json.c_str(), lenet.params.data(), static_cast<int>(lenet.params.size()),
                     1, 0, 1, typo, indptr, shape, &h) == -1);
  CHECK(last_error().rfind("MXPredCreate: input 'dta' is not an argument of the network (did you "
                           "mean 'data'?)",
                           0) == 0);
  CHECK(MXPredCreate(lenet.json.c_str(), lenet.params.data(), -5, 1, 0, 1, keys, indptr, shape,
                     &h) == -1);
  CHECK(last_error() == "MXPredCreate: param size -5 is negative");
  CHECK(MXPredCreate(lenet.json.c_str(), lenet.params.data(), static_cast<int>(lenet.params.size()),
                     7, 0, 1, keys, indptr, shape, &h) == -1);
  CHECK(last_error() == "MXPredCreate: dev_type 7 is not 1 (cpu) or 2 (gpu)");
  CHECK(MXPredCreate(nullptr, lenet.params.data(), 10, 1, 0, 1, keys, indptr, shape, &h) == -1);
  CHECK(last_error() == "MXPredCreate: symbol_json_str is NULL");
  CHECK(h == reinterpret_cast<PredictorHandle>(0x1));
}

TEST_CASE("calls on a predictor check their arguments") {
  const Model lenet(kLenet);
  PredictorHandle h = lenet.make({1, 1, 28, 28});
  std::vector<float> values(784);
  CHECK(MXPredSetInput(h, "data", values.data(), 100) == -1);
  CHECK(last_error() ==
        "MXPredSetInput: input 'data' is (1, 1, 28, 28), 784 elements; 100 were given");
  CHECK(MXPredSetInput(h, "fc1_weight", values.data(), 784) == -1);
  CHECK(last_error() ==
        "MXPredSetInput: 'fc1_weight' is not an input of the network (it is a weight from the "
        "params); inputs: data, softmax_label");
  CHECK(MXPredSetInput(h, "image", values.data(), 784) == -1);
  CHECK(last_error().rfind("MXPredSetInput: 'image' is not an input of the network; inputs: ", 0) ==
        0);
  CHECK(MXPredForward(nullptr) == -1);
  CHECK(last_error() == "MXPredForward: the predictor handle is NULL");
  std::vector<float> out(10);
  CHECK(MXPredGetOutput(h, 1, out.data(), 10) == -1);
  CHECK(last_error() ==
        "MXPredGetOutput: output index 1 is out of range: the network has 1 output(s)");
  CHECK(MXPredGetOutput(h, 0, out.data(), 9) == -1);
  CHECK(last_error() == "MXPredGetOutput: output 0 is (1, 10), 10 elements; room for 9 was given");
  const char* keys[] = {"softmax_label"};
  const mx_uint indptr[] = {0, 1}, shape[] = {4};
  PredictorHandle other = nullptr;
  CHECK(MXPredReshape(1, keys, indptr, shape, h, &other) == -1);
  CHECK(last_error() ==
        "MXPredReshape: 'softmax_label' is not an input of this predictor (inputs: data); only the "
        "inputs' shapes may change");
  CHECK(other == nullptr);
  CHECK(MXPredFree(h) == 0);
}

TEST_CASE("argument types: MXPredCreateEx checks them") {
  const Model lenet(kLenet);
  const char* keys[] = {"data"};
  const mx_uint indptr[] = {0, 4}, shape[] = {2, 1, 28, 28};
  auto create = [&](const char* name, int type, PredictorHandle* out) {
    const char* names[] = {name};
    const int types[] = {type};
    return MXPredCreateEx(lenet.json.c_str(), lenet.params.data(),
                          static_cast<int>(lenet.params.size()), 1, 0, 1, keys, indptr, shape, 1,
                          names, types, out);
  };
  PredictorHandle h = nullptr;
  REQUIRE_MESSAGE(create("data", 0, &h) == 0, MXGetLastError());
  const std::vector<float> input = random_values(2 * 784, 6);
  PredictorHandle plain = lenet.make({2, 1, 28, 28});
  CHECK(run(h, input) == run(plain, input));
  CHECK(MXPredFree(h) == 0);
  CHECK(MXPredFree(plain) == 0);

  CHECK(create("data", 9, &h) == -1);
  CHECK(last_error() ==
        "MXPredCreateEx: the type of 'data' is 9, not a type flag (0 float32, 1 float64, 2 "
        "float16, 3 uint8, 4 int32, 5 int8, 6 int64)");
  CHECK(create("fc1_weight", 2, &h) == -1);
  CHECK(last_error() ==
        "MXPredCreateEx: the type of 'fc1_weight': float16 was given but the params hold it as "
        "float32");
}

TEST_CASE("MXNDList reads a .params file's arrays as floats") {
  const std::string bytes = read_file(kLenet + "-0001.params");
  const NamedArrays want = load_params(kLenet + "-0001.params");
  NDListHandle list = nullptr;
  mx_uint length = 0;
  REQUIRE(MXNDListCreate(bytes.data(), static_cast<int>(bytes.size()), &list, &length) == 0);
  REQUIRE(length == want.arrays.size());
  for (mx_uint i = 0; i < length; ++i) {
    const char* key = nullptr;
    const mx_float* data = nullptr;
    const mx_uint* shape = nullptr;
    mx_uint ndim = 0;
    REQUIRE(MXNDListGet(list, i, &key, &data, &shape, &ndim) == 0);
    CAPTURE(key);
    CHECK(key == want.names[i]);
    const Shape& s = want.arrays[i].shape();
    CHECK(std::vector<int64_t>(shape, shape + ndim) == s.to_vector());
    const std::vector<float> values = want.arrays[i].to_vector<float>();
    CHECK(std::vector<float>(data, data + values.size()) == values);
  }
  const char* key = nullptr;
  const mx_float* data = nullptr;
  const mx_uint* shape = nullptr;
  mx_uint ndim = 0;
  CHECK(MXNDListGet(list, length, &key, &data, &shape, &ndim) == -1);
  CHECK(last_error() == "MXNDListGet: index " + std::to_string(length) +
                            " is out of range: the list has " + std::to_string(length) +
                            " array(s)");
  CHECK(MXNDListFree(list) == 0);

  CHECK(MXNDListCreate(bytes.data(), 30, &list, &length) == -1);
  CHECK(last_error() ==
        "MXNDListCreate: nd bytes: byte 16: array count 8 cannot fit in the 6 bytes that follow");
}

TEST_CASE("the last error belongs to the thread whose call failed") {
  CHECK(MXPredForward(nullptr) == -1);
  std::string seen_there = "unset";
  std::thread other([&] {
    seen_there = MXGetLastError();
    MXPredFree(nullptr);
  });
  other.join();
  CHECK(seen_there.empty());
  CHECK(last_error() == "MXPredForward: the predictor handle is NULL");
}

TEST_CASE("two threads, each owning a predictor, run at the same time") {
  const Model lenet(kLenet);
  constexpr int kRounds = 20;
  // What each thread must see, computed on one thread first.
  std::vector<std::vector<float>> inputs, expected;
  PredictorHandle reference = lenet.make({4, 1, 28, 28});
  for (int t = 0; t < 2 * kRounds; ++t) {
    inputs.push_back(random_values(4 * 784, 100 + t));
    expected.push_back(run(reference, inputs.back()));
  }
  CHECK(MXPredFree(reference) == 0);

  // One predictor made by MXPredCreate in its thread, two sharing weights by
  // MXPredCreateMultiThread.
  PredictorHandle shared[2] = {nullptr, nullptr};
  const char* keys[] = {"data"};
  const mx_uint indptr[] = {0, 4}, shape[] = {4, 1, 28, 28};
  REQUIRE(MXPredCreateMultiThread(lenet.json.c_str(), lenet.params.data(),
                                  static_cast<int>(lenet.params.size()), 1, 0, 1, keys, indptr,
                                  shape, 2, shared) == 0);
  for (PredictorHandle first : {PredictorHandle{}, shared[0]}) {
    int failures[2] = {0, 0};
    auto work = [&](int id, PredictorHandle h) {
      const bool own = h == nullptr;
      if (own && lenet.create({4, 1, 28, 28}, &h) != 0) {
        failures[id] = -1;
        return;
      }
      for (int r = 0; r < kRounds; ++r) {
        const size_t k = static_cast<size_t>(2 * r + id);
        std::vector<float> out(40);
        if (MXPredSetInput(h, "data", inputs[k].data(), 4 * 784) != 0 || MXPredForward(h) != 0 ||
            MXPredGetOutput(h, 0, out.data(), 40) != 0 || out != expected[k])
          ++failures[id];
      }
      if (own) MXPredFree(h);
    };
    std::thread a(work, 0, first), b(work, 1, first ? shared[1] : nullptr);
    a.join();
    b.join();
    CHECK(failures[0] == 0);
    CHECK(failures[1] == 0);
  }
  CHECK(MXPredFree(shared[0]) == 0);
  CHECK(MXPredFree(shared[1]) == 0);
}

// The C API's operator and autograd functions: listings, the info a front
// end generates functions from, imperative calls, recording and backward.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#include "c_api_test_util.h"

using namespace mx::test;

TEST_CASE("C API: operator names, handles and creators") {
  mx_uint n = 0;
  const char** names = nullptr;
  MX_OK(MXListAllOpNames(&n, &names));
  std::vector<std::string> all(names, names + n);
  CHECK(std::is_sorted(all.begin(), all.end()));
  for (const char* want : {"FullyConnected", "Convolution", "BatchNorm", "concat", "add_n"})
    CHECK(std::find(all.begin(), all.end(), want) != all.end());
  mx_uint nc = 0;
  AtomicSymbolCreator* creators = nullptr;
  MX_OK(MXSymbolListAtomicSymbolCreators(&nc, &creators));
  REQUIRE(nc == n);
  // Creators follow the names; an alias gives its operator.
  for (mx_uint i = 0; i < n; ++i) {
    OpHandle h = nullptr;
    MX_OK(NNGetOpHandle(names[i], &h));
    CHECK(h == creators[i]);
  }
  const char* name = nullptr;
  MX_OK(MXSymbolGetAtomicSymbolName(op_handle("concat"), &name));
  CHECK(std::string(name) == "Concat");

  OpHandle h = nullptr;
  CHECK(failure(NNGetOpHandle("FullyConected", &h)) ==
        "NNGetOpHandle: unknown operator 'FullyConected' (did you mean 'FullyConnected'?)");
  CHECK(failure(NNGetOpHandle(nullptr, &h)) == "NNGetOpHandle: op_name is NULL");
  CHECK(failure(NNGetOpHandle("relu", nullptr)) == "NNGetOpHandle: op_out is NULL");
  CHECK(failure(MXListAllOpNames(nullptr, &names)) ==
        "MXListAllOpNames: out_size or out_array is NULL");
  CHECK(failure(MXSymbolListAtomicSymbolCreators(&nc, nullptr)) ==
        "MXSymbolListAtomicSymbolCreators: out_size or out_array is NULL");
  int not_an_op = 0;
  CHECK(failure(MXSymbolGetAtomicSymbolName(&not_an_op, &name)) ==
        "MXSymbolGetAtomicSymbolName: the operator handle is not an operator of this library "
        "(take one from NNGetOpHandle or MXSymbolListAtomicSymbolCreators)");
  CHECK(failure(MXSymbolGetAtomicSymbolName(nullptr, &name)) ==
        "MXSymbolGetAtomicSymbolName: the operator handle is NULL");
  CHECK(h == nullptr);
}

namespace {

struct Info {
  std::string name, description, key_var_num_args, return_type;
  std::vector<std::string> names, types, descriptions;
};

Info info_of(const char* op) {
  const char *name, *description, *key, *ret;
  mx_uint n = 0;
  const char **names, **types, **descriptions;
  MX_OK(MXSymbolGetAtomicSymbolInfo(op_handle(op), &name, &description, &n, &names, &types,
                                    &descriptions, &key, &ret));
  return {name,
          description,
          key,
          ret,
          {names, names + n},
          {types, types + n},
          {descriptions, descriptions + n}};
}

}  // namespace

TEST_CASE("C API: operator info for generated front-end functions") {
  Info fc = info_of("FullyConnected");
  CHECK(fc.name == "FullyConnected");
  CHECK(!fc.description.empty());
  CHECK(fc.key_var_num_args.empty());
  CHECK(fc.return_type == "NDArray-or-Symbol");
  REQUIRE(fc.names.size() >= 5);
  CHECK(std::vector<std::string>(fc.names.begin(), fc.names.begin() + 3) ==
        std::vector<std::string>{"data", "weight", "bias"});
  CHECK(fc.types[0] == "NDArray-or-Symbol");
  auto at = [&](const Info& info, const std::string& n) {
    auto it = std::find(info.names.begin(), info.names.end(), n);
    REQUIRE(it != info.names.end());
    return static_cast<size_t>(it - info.names.begin());
  };
  CHECK(fc.types[at(fc, "num_hidden")] == "int, required");
  CHECK(fc.types[at(fc, "no_bias")] == "boolean, optional, default=False");
  CHECK(!fc.descriptions[at(fc, "num_hidden")].empty());

  Info bn = info_of("BatchNorm");
  CHECK(bn.names[3] == "moving_mean");
  CHECK(bn.names[4] == "moving_var");
  CHECK(bn.types[at(bn, "eps")].rfind("double, optional, default=0.001", 0) == 0);

  Info concat = info_of("Concat");
  CHECK(concat.key_var_num_args == "num_args");
  CHECK(concat.names[0] == "data");
  CHECK(concat.types[0] == "NDArray-or-Symbol[]");

  Info pool = info_of("Pooling");
  CHECK(pool.types[at(pool, "pool_type")] == "{'max', 'avg', 'sum'}, optional, default=max");

  // Every operator has a complete description: no input left undetermined.
  mx_uint n = 0;
  AtomicSymbolCreator* creators = nullptr;
  MX_OK(MXSymbolListAtomicSymbolCreators(&n, &creators));
  for (mx_uint i = 0; i < n; ++i) {
    const char *name, *description, *key;
    mx_uint num = 0;
    const char **names, **types, **descriptions;
    MX_OK(MXSymbolGetAtomicSymbolInfo(creators[i], &name, &description, &num, &names, &types,
                                      &descriptions, &key, nullptr));
    for (mx_uint k = 0; k < num; ++k) {
      INFO(name, " argument ", k);
      CHECK(std::string(names[k]).find("depends") == std::string::npos);
      CHECK(std::string(types[k]) != "");
    }
  }
  const char *name, *description, *key;
  mx_uint num = 0;
  const char **names, **types, **descriptions;
  CHECK(failure(MXSymbolGetAtomicSymbolInfo(op_handle("relu"), &name, &description, &num, &names,
                                            nullptr, &descriptions, &key, nullptr)) ==
        "MXSymbolGetAtomicSymbolInfo: an output pointer is NULL");
  CHECK(failure(MXSymbolGetAtomicSymbolInfo(nullptr, &name, &description, &num, &names, &types,
                                            &descriptions, &key, nullptr)) ==
        "MXSymbolGetAtomicSymbolInfo: the operator handle is NULL");
}

TEST_CASE("C API: imperative calls with new and given outputs") {
  Nd x = make_array({2, 3}, {1, 2, 3, 4, 5, 6});
  Nd w = make_array({2, 3}, {1, 0, 0, 0, 1, 0});
  Nd b = make_array({2}, {10, 20});
  auto y = invoke("FullyConnected", {x.get(), w.get(), b.get()}, {"num_hidden"}, {"2"});
  REQUIRE(y.size() == 1);
  CHECK(read(y[0].get()) == std::vector<float>{11, 22, 14, 25});
  // Dropout has a hidden mask output: only the visible one comes back.
  CHECK(invoke("Dropout", {x.get()}, {"p"}, {"0.5"}).size() == 1);
  // SliceChannel has several outputs.
  auto parts = invoke("SliceChannel", {x.get()}, {"num_outputs", "axis"}, {"3", "1"});
  REQUIRE(parts.size() == 3);
  CHECK(read(parts[2].get()) == std::vector<float>{3, 6});
  // num_args is set from the inputs, as MXNet does.
  auto joined = invoke("Concat", {x.get(), x.get()}, {"dim"}, {"0"});
  CHECK(shape_of(joined[0].get()) == std::vector<mx_uint>{4, 3});
  // Given outputs: in place on an input.
  NDArrayHandle ins[] = {x.get()};
  NDArrayHandle outs[] = {x.get()};
  NDArrayHandle* out_list = outs;
  int n = 1;
  const char* keys[] = {"scalar"};
  const char* vals[] = {"1"};
  MX_OK(MXImperativeInvoke(op_handle("_plus_scalar"), 1, ins, &n, &out_list, 1, keys, vals));
  CHECK(read(x.get()) == std::vector<float>{2, 3, 4, 5, 6, 7});
}

TEST_CASE("C API: imperative call errors") {
  Nd x = make_array({2, 3}, {1, 2, 3, 4, 5, 6});
  Nd w = make_array({4, 3}, std::vector<float>(12, 1));
  NDArrayHandle ins[] = {x.get(), w.get()};
  int n = 0;
  NDArrayHandle* outs = nullptr;
  const char* keys[] = {"num_hidden", "no_bias"};
  const char* vals[] = {"2", "True"};
  const OpHandle fc = op_handle("FullyConnected");
  CHECK(
      failure(MXImperativeInvoke(fc, 2, ins, &n, &outs, 2, keys, vals)) ==
      "MXImperativeInvoke: FullyConnected: input 'weight': shape (4, 3) conflicts with (2, 3)");  // weight (4, 3) vs num_hidden 2
  CHECK(failure(MXImperativeInvoke(fc, 1, ins, &n, &outs, 2, keys, vals)) ==
        "MXImperativeInvoke: FullyConnected: 2 inputs expected (data, weight), 1 given");
  const char* typo_keys[] = {"num_hiden"};
  CHECK(failure(MXImperativeInvoke(fc, 2, ins, &n, &outs, 1, typo_keys, vals)) ==
        "MXImperativeInvoke: FullyConnected: unknown parameter 'num_hiden' (did you mean "
        "'num_hidden'?); parameters are: num_hidden, no_bias, flatten");
  const char* bad_vals[] = {"two"};
  CHECK(failure(MXImperativeInvoke(fc, 2, ins, &n, &outs, 1, keys, bad_vals)) ==
        "MXImperativeInvoke: FullyConnected: parameter 'num_hidden': 'two' is not an integer");
  const char* twice[] = {"num_hidden", "num_hidden"};
  CHECK(failure(MXImperativeInvoke(fc, 2, ins, &n, &outs, 2, twice, vals)) ==
        "MXImperativeInvoke: parameter 'num_hidden' is given twice");
  CHECK(failure(MXImperativeInvoke(fc, 2, ins, &n, &outs, 2, keys, nullptr)) ==
        "MXImperativeInvoke: param_vals is NULL");
  CHECK(failure(MXImperativeInvoke(nullptr, 2, ins, &n, &outs, 2, keys, vals)) ==
        "MXImperativeInvoke: the operator handle is NULL");
  CHECK(failure(MXImperativeInvoke(fc, 2, ins, nullptr, &outs, 2, keys, vals)) ==
        "MXImperativeInvoke: num_outputs or outputs is NULL");
  NDArrayHandle with_null[] = {x.get(), nullptr};
  CHECK(failure(MXImperativeInvoke(fc, 2, with_null, &n, &outs, 2, keys, vals)) ==
        "MXImperativeInvoke: inputs[1] is NULL");
  // Given outputs of the wrong count or shape.
  Nd y = make_array({2, 2}, {0, 0, 0, 0});
  NDArrayHandle one_in[] = {x.get()};
  NDArrayHandle given[] = {y.get(), y.get()};
  NDArrayHandle* given_list = given;
  n = 2;
  CHECK(failure(MXImperativeInvoke(op_handle("relu"), 1, one_in, &n, &given_list, 0, nullptr,
                                   nullptr)) ==
        "MXImperativeInvoke: relu: 2 output arrays given, but it has 1 output");
  n = 1;
  CHECK(failure(MXImperativeInvoke(op_handle("relu"), 1, one_in, &n, &given_list, 0, nullptr,
                                   nullptr)) ==
        "MXImperativeInvoke: relu: output 0 is float32 (2, 2) on cpu:0, but the operator makes "
        "float32 (2, 3)");
  CHECK(n == 1);
  CHECK(outs == nullptr);
}

TEST_CASE("C API: autograd switches") {
  int prev = -1;
  bool on = true;
  MX_OK(MXAutogradIsRecording(&on));
  CHECK(!on);
  MX_OK(MXAutogradSetIsRecording(1, &prev));
  CHECK(prev == 0);
  MX_OK(MXAutogradIsRecording(&on));
  CHECK(on);
  MX_OK(MXAutogradSetIsRecording(0, &prev));
  CHECK(prev == 1);
  MX_OK(MXAutogradSetIsTraining(1, &prev));
  MX_OK(MXAutogradIsTraining(&on));
  CHECK(on);
  MX_OK(MXAutogradSetIsTraining(0, &prev));
  CHECK(prev == 1);
  CHECK(failure(MXAutogradSetIsRecording(1, nullptr)) == "MXAutogradSetIsRecording: prev is NULL");
  CHECK(failure(MXAutogradSetIsTraining(1, nullptr)) == "MXAutogradSetIsTraining: prev is NULL");
  CHECK(failure(MXAutogradIsRecording(nullptr)) == "MXAutogradIsRecording: curr is NULL");
  CHECK(failure(MXAutogradIsTraining(nullptr)) == "MXAutogradIsTraining: curr is NULL");
}

namespace {

// Records y = sum(x * x * w) (x marked) and returns y.
Nd record_square_sum(NDArrayHandle x, NDArrayHandle w) {
  int prev = 0;
  MX_OK(MXAutogradSetIsRecording(1, &prev));
  auto xx = invoke("elemwise_mul", {x, x});
  auto xxw = invoke("elemwise_mul", {xx[0].get(), w});
  auto y = invoke("sum", {xxw[0].get()});
  MX_OK(MXAutogradSetIsRecording(0, &prev));
  return std::move(y[0]);
}

}  // namespace

TEST_CASE("C API: mark, record, backward, GetGrad, Detach") {
  Nd x = make_array({3}, {1, 2, 3}), w = make_array({3}, {1, 10, 100});
  Nd grad = make_array({3}, {0, 0, 0});
  NDArrayHandle vars[] = {x.get()};
  NDArrayHandle grads[] = {grad.get()};
  mx_uint reqs[] = {1};
  MX_OK(MXAutogradMarkVariables(1, vars, reqs, grads));
  Nd y = record_square_sum(x.get(), w.get());
  CHECK(read(y.get()) == std::vector<float>{1 + 40 + 900});
  NDArrayHandle heads[] = {y.get()};
  MX_OK(MXAutogradBackward(1, heads, nullptr, 0));
  CHECK(read(grad.get()) == std::vector<float>{2, 40, 600});
  Nd g;
  MX_OK(MXNDArrayGetGrad(x.get(), g.out()));
  CHECK(read(g.get()) == std::vector<float>{2, 40, 600});
  Nd no_grad;
  MX_OK(MXNDArrayGetGrad(w.get(), no_grad.out()));
  CHECK(no_grad.get() == nullptr);
  // The graph is freed after backward unless retained.
  CHECK(failure(MXAutogradBackward(1, heads, nullptr, 0)) ==
        "MXAutogradBackward: the graph recorded for sum was freed by an earlier backward pass; "
        "pass retain_graph to that pass to run backward through it again");

  // Head gradients, retain_graph and grad_req add.
  reqs[0] = 3;
  MX_OK(MXAutogradMarkVariables(1, vars, reqs, grads));
  Nd y2 = record_square_sum(x.get(), w.get());
  Nd half = make_array({1}, {0.5f});
  NDArrayHandle heads2[] = {y2.get()};
  NDArrayHandle ograds[] = {half.get()};
  MX_OK(MXAutogradBackward(1, heads2, ograds, 1));
  MX_OK(MXAutogradBackward(1, heads2, ograds, 0));
  CHECK(read(grad.get()) == std::vector<float>{2 + 2, 40 + 40, 600 + 600});

  // A detached copy is a constant: nothing recorded from it.
  Nd d;
  MX_OK(MXNDArrayDetach(x.get(), d.out()));
  Nd y3 = record_square_sum(d.get(), w.get());
  NDArrayHandle heads3[] = {y3.get()};
  CHECK(failure(MXAutogradBackward(1, heads3, nullptr, 0))
            .rfind("MXAutogradBackward: head 0 is neither the result of a recorded operator call",
                   0) == 0);
}

TEST_CASE("C API: MXAutogradBackwardEx with variables returns their gradients") {
  Nd x = make_array({3}, {1, 2, 3}), w = make_array({3}, {1, 1, 1});
  Nd grad = make_array({3}, {7, 7, 7});
  NDArrayHandle vars[] = {x.get()};
  NDArrayHandle grads[] = {grad.get()};
  mx_uint reqs[] = {1};
  MX_OK(MXAutogradMarkVariables(1, vars, reqs, grads));
  Nd y = record_square_sum(x.get(), w.get());
  NDArrayHandle heads[] = {y.get()};
  NDArrayHandle* out = nullptr;
  int* stypes = nullptr;
  MX_OK(MXAutogradBackwardEx(1, heads, nullptr, 1, vars, 1, 0, 1, &out, &stypes));
  Nd g(out[0]);
  CHECK(stypes[0] == 0);
  CHECK(read(g.get()) == std::vector<float>{2, 4, 6});
  CHECK(read(grad.get()) == std::vector<float>{7, 7, 7});  // the buffer is left alone
  CHECK(failure(MXAutogradBackwardEx(1, heads, nullptr, 1, vars, 1, 1, 1, &out, &stypes)) ==
        "MXAutogradBackwardEx: create_graph is not supported: mx does not record gradients of "
        "gradients");
  CHECK(failure(MXAutogradBackwardEx(1, heads, nullptr, 1, vars, 1, 0, 1, nullptr, &stypes)) ==
        "MXAutogradBackwardEx: grad_handles is NULL");
  NDArrayHandle not_var[] = {y.get()};
  CHECK(failure(MXAutogradBackwardEx(1, heads, nullptr, 1, not_var, 1, 0, 1, &out, &stypes)) ==
        "MXAutogradBackwardEx: variable 0 is not a marked variable; gradients are taken with "
        "respect to marked variables only");
  // Backward into the buffer through the Ex form.
  MX_OK(MXAutogradBackwardEx(1, heads, nullptr, 0, nullptr, 0, 0, 1, nullptr, nullptr));
  CHECK(read(grad.get()) == std::vector<float>{2, 4, 6});
}

TEST_CASE("C API: autograd errors") {
  Nd x = make_array({3}, {1, 2, 3});
  Nd small = make_array({2}, {0, 0});
  NDArrayHandle vars[] = {x.get()};
  NDArrayHandle grads[] = {small.get()};
  mx_uint reqs[] = {1};
  CHECK(failure(MXAutogradMarkVariables(1, vars, reqs, grads)) ==
        "MXAutogradMarkVariables: variable 0: its gradient array is float32 (2,) on cpu:0, the "
        "variable is float32 (3,) on cpu:0");
  mx_uint bad_req[] = {5};
  CHECK(failure(MXAutogradMarkVariables(1, vars, bad_req, grads)) ==
        "MXAutogradMarkVariables: reqs_array[0] is 5, not 0 (null), 1 (write), 2 (write in "
        "place) or 3 (add)");
  CHECK(failure(MXAutogradMarkVariables(1, nullptr, reqs, grads)) ==
        "MXAutogradMarkVariables: var_handles, reqs_array or grad_handles is NULL");
  NDArrayHandle null_grads[] = {nullptr};
  CHECK(failure(MXAutogradMarkVariables(1, vars, reqs, null_grads)) ==
        "MXAutogradMarkVariables: grad_handles[0] is NULL");
  mx_uint null_req[] = {0};
  MX_OK(MXAutogradMarkVariables(1, vars, null_req, null_grads));  // no gradient wanted
  CHECK(failure(MXAutogradBackward(0, nullptr, nullptr, 0)) ==
        "MXAutogradBackward: no heads to differentiate");
  CHECK(failure(MXAutogradBackward(1, nullptr, nullptr, 0)) ==
        "MXAutogradBackward: output_handles is NULL");
  // Writing a marked variable while recording.
  int prev = 0;
  MX_OK(MXAutogradSetIsRecording(1, &prev));
  NDArrayHandle ins[] = {x.get()};
  NDArrayHandle outs[] = {x.get()};
  NDArrayHandle* out_list = outs;
  int n = 1;
  const std::string message =
      failure(MXImperativeInvoke(op_handle("relu"), 1, ins, &n, &out_list, 0, nullptr, nullptr));
  MX_OK(MXAutogradSetIsRecording(0, &prev));
  CHECK(message.rfind("MXImperativeInvoke: relu: output 0 is on the autograd tape", 0) == 0);
}

// The C API's Symbol and Executor functions: building (atomic + compose,
// JSON, YAML), listings, attributes, inference, binding and training steps
// against autograd on the same arrays, and every error.
#include <algorithm>
#include <cstring>

#include "c_api_test_util.h"
#include "temp_dir.h"

using namespace mx::test;

namespace {

class Sym {
 public:
  Sym() = default;
  explicit Sym(SymbolHandle h) : h_(h) {}
  ~Sym() { MXSymbolFree(h_); }
  Sym(const Sym&) = delete;
  Sym& operator=(const Sym&) = delete;
  Sym(Sym&& o) noexcept : h_(o.h_) { o.h_ = nullptr; }
  SymbolHandle get() const { return h_; }
  SymbolHandle* out() { return &h_; }

 private:
  SymbolHandle h_ = nullptr;
};

Sym variable(const char* name) {
  Sym s;
  MX_OK(MXSymbolCreateVariable(name, s.out()));
  return s;
}

// op(name, params) applied to inputs by position.
Sym compose(const char* op, const char* name, std::vector<const char*> keys,
            std::vector<const char*> vals, std::vector<SymbolHandle> inputs) {
  Sym s;
  MX_OK(MXSymbolCreateAtomicSymbol(op_handle(op), static_cast<mx_uint>(keys.size()), keys.data(),
                                   vals.data(), s.out()));
  MX_OK(
      MXSymbolCompose(s.get(), name, static_cast<mx_uint>(inputs.size()), nullptr, inputs.data()));
  return s;
}

std::vector<std::string> listed(int (*list)(SymbolHandle, mx_uint*, const char***),
                                SymbolHandle s) {
  mx_uint n = 0;
  const char** names = nullptr;
  MX_OK(list(s, &n, &names));
  return {names, names + n};
}

// data -> fc1 (4) -> relu -> fc2 (3) -> SoftmaxOutput
Sym mlp() {
  Sym data = variable("data");
  Sym fc1 = compose("FullyConnected", "fc1", {"num_hidden"}, {"4"}, {data.get()});
  Sym act = compose("Activation", "relu1", {"act_type"}, {"relu"}, {fc1.get()});
  Sym fc2 = compose("FullyConnected", "fc2", {"num_hidden"}, {"3"}, {act.get()});
  return compose("SoftmaxOutput", "softmax", {}, {}, {fc2.get()});
}

}  // namespace

TEST_CASE("C API: symbols from operators, listings, JSON round trip") {
  Sym net = mlp();
  CHECK(listed(MXSymbolListArguments, net.get()) ==
        std::vector<std::string>{"data", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias",
                                 "softmax_label"});
  CHECK(listed(MXSymbolListOutputs, net.get()) == std::vector<std::string>{"softmax_output"});
  CHECK(listed(MXSymbolListAuxiliaryStates, net.get()).empty());
  mx_uint outputs = 0;
  MX_OK(MXSymbolGetNumOutputs(net.get(), &outputs));
  CHECK(outputs == 1);
  const char* name = nullptr;
  int ok = 0;
  MX_OK(MXSymbolGetName(net.get(), &name, &ok));
  CHECK(ok == 1);
  CHECK(std::string(name) == "softmax");

  const char* json = nullptr;
  MX_OK(MXSymbolSaveToJSON(net.get(), &json));
  const std::string first = json;  // valid until the next MXSymbolSaveToJSON
  Sym back;
  MX_OK(MXSymbolCreateFromJSON(first.c_str(), back.out()));
  MX_OK(MXSymbolSaveToJSON(back.get(), &json));
  CHECK(first == json);
  CHECK(first.find("\"fc1\"") != std::string::npos);

  TempDir dir("c_api_symbol");
  const std::string path = dir.file("net-symbol.json");
  MX_OK(MXSymbolSaveToFile(net.get(), path.c_str()));
  Sym loaded;
  MX_OK(MXSymbolCreateFromFile(path.c_str(), loaded.out()));
  CHECK(listed(MXSymbolListArguments, loaded.get()).size() == 6);

  Sym internals, fc1_out;
  MX_OK(MXSymbolGetInternals(net.get(), internals.out()));
  auto all = listed(MXSymbolListOutputs, internals.get());
  CHECK(std::find(all.begin(), all.end(), "fc1_output") != all.end());
  MX_OK(MXSymbolGetOutput(internals.get(), 1, fc1_out.out()));
  CHECK(listed(MXSymbolListOutputs, fc1_out.get()) == std::vector<std::string>{"fc1_weight"});

  // Named inputs, and a group.
  Sym w = variable("shared_w");
  Sym atomic;
  const char* keys[] = {"num_hidden", "no_bias"};
  const char* vals[] = {"2", "True"};
  MX_OK(MXSymbolCreateAtomicSymbol(op_handle("FullyConnected"), 2, keys, vals, atomic.out()));
  Sym data = variable("x");
  const char* input_names[] = {"weight", "data"};
  SymbolHandle inputs[] = {w.get(), data.get()};
  MX_OK(MXSymbolCompose(atomic.get(), "fc", 2, input_names, inputs));
  CHECK(listed(MXSymbolListArguments, atomic.get()) == std::vector<std::string>{"x", "shared_w"});
  SymbolHandle parts[] = {net.get(), atomic.get()};
  Sym group;
  MX_OK(MXSymbolCreateGroup(2, parts, group.out()));
  CHECK(listed(MXSymbolListOutputs, group.get()) ==
        std::vector<std::string>{"softmax_output", "fc_output"});
  MX_OK(MXSymbolGetName(group.get(), &name, &ok));
  CHECK(ok == 0);
  // Concat takes its input count from the inputs.
  Sym cat = compose("Concat", "cat", {"dim"}, {"1"}, {data.get(), data.get(), data.get()});
  mx_uint n_args = 0;
  const char** arg_names = nullptr;
  MX_OK(MXSymbolListArguments(cat.get(), &n_args, &arg_names));
  CHECK(n_args == 1);
}

TEST_CASE("C API: attributes and copies") {
  Sym x = variable("x");
  MX_OK(MXSymbolSetAttr(x.get(), "__shape__", "(2, 3)"));
  const char* value = nullptr;
  int found = 0;
  MX_OK(MXSymbolGetAttr(x.get(), "__shape__", &value, &found));
  CHECK(found == 1);
  CHECK(std::string(value) == "(2, 3)");
  MX_OK(MXSymbolGetAttr(x.get(), "__lr_mult__", &value, &found));
  CHECK(found == 0);
  Sym copy;
  MX_OK(MXSymbolCopy(x.get(), copy.out()));
  MX_OK(MXSymbolSetAttr(copy.get(), "__shape__", "(5,)"));
  MX_OK(MXSymbolGetAttr(x.get(), "__shape__", &value, &found));
  CHECK(std::string(value) == "(2, 3)");  // the copy is separate
  Sym fc = compose("FullyConnected", "fc", {"num_hidden"}, {"3"}, {x.get()});
  MX_OK(MXSymbolGetAttr(fc.get(), "num_hidden", &value, &found));
  CHECK(std::string(value) == "3");
  CHECK(failure(MXSymbolSetAttr(fc.get(), "num_hidden", "many")) ==
        "MXSymbolSetAttr: node 'fc' (FullyConnected): parameter 'num_hidden': 'many' is not an "
        "integer");
  MX_OK(MXSymbolGetAttr(fc.get(), "num_hidden", &value, &found));
  CHECK(std::string(value) == "3");  // a refused value leaves the node as it was
  CHECK(listed(MXSymbolListArguments, fc.get()) ==
        std::vector<std::string>{"x", "fc_weight", "fc_bias"});
  CHECK(failure(MXSymbolSetAttr(fc.get(), nullptr, "1")) ==
        "MXSymbolSetAttr: key or value is NULL");
  CHECK(failure(MXSymbolGetAttr(fc.get(), "k", nullptr, &found)) ==
        "MXSymbolGetAttr: out or success is NULL");
}

TEST_CASE("C API: shape and type inference") {
  Sym net = mlp();
  const char* keys[] = {"data"};
  const mx_uint ind[] = {0, 2};
  const mx_uint shape[] = {5, 7};
  mx_uint in_n, out_n, aux_n;
  const mx_uint *in_nd, *out_nd, *aux_nd;
  const mx_uint **in_d, **out_d, **aux_d;
  int complete = 0;
  MX_OK(MXSymbolInferShape(net.get(), 1, keys, ind, shape, &in_n, &in_nd, &in_d, &out_n, &out_nd,
                           &out_d, &aux_n, &aux_nd, &aux_d, &complete));
  CHECK(complete == 1);
  REQUIRE(in_n == 6);
  CHECK(std::vector<mx_uint>(in_d[1], in_d[1] + in_nd[1]) == std::vector<mx_uint>{4, 7});
  CHECK(std::vector<mx_uint>(in_d[5], in_d[5] + in_nd[5]) == std::vector<mx_uint>{5});
  REQUIRE(out_n == 1);
  CHECK(std::vector<mx_uint>(out_d[0], out_d[0] + out_nd[0]) == std::vector<mx_uint>{5, 3});
  CHECK(aux_n == 0);

  // Positional keys (NULL): the first arguments; partial information.
  Sym x = variable("x");
  Sym fc = compose("FullyConnected", "fc", {"num_hidden"}, {"3"}, {x.get()});
  const mx_uint wind[] = {0, 2};
  const int wshape[] = {3, 8};
  const char* wkey[] = {"fc_weight"};
  mx_uint n1, n2, n3;
  const int *nd1, *nd2, *nd3;
  const int **d1, **d2, **d3;
  MX_OK(MXSymbolInferShapeEx(fc.get(), 1, wkey, wind, wshape, &n1, &nd1, &d1, &n2, &nd2, &d2, &n3,
                             &nd3, &d3, &complete));
  CHECK(complete == 0);  // the batch size is unknown
  CHECK(nd1[0] == -1);   // x: nothing tells its shape
  CHECK(std::vector<int>(d1[1], d1[1] + nd1[1]) == std::vector<int>{3, 8});
  const mx_uint x_shape[] = {3, 8};
  MX_OK(MXSymbolInferShape(fc.get(), 1, wkey, wind, x_shape, &in_n, &in_nd, &in_d, &out_n, &out_nd,
                           &out_d, &aux_n, &aux_nd, &aux_d, &complete));
  CHECK(in_nd[0] == 0);  // unknown: no dimensions in MXNet's legacy form
  CHECK(std::vector<mx_uint>(in_d[1], in_d[1] + in_nd[1]) == std::vector<mx_uint>{3, 8});

  const int types[] = {1};
  mx_uint ti, to, ta;
  const int *tin, *tout, *taux;
  MX_OK(MXSymbolInferType(fc.get(), 1, wkey, types, &ti, &tin, &to, &tout, &ta, &taux, &complete));
  CHECK(std::vector<int>(tin, tin + ti) == std::vector<int>{1, 1, 1});
  CHECK(tout[0] == 1);

  // Errors: a shape the network cannot take, an unknown name, bad pointers.
  const mx_uint bad_ind[] = {0, 2, 4};
  const mx_uint bad[] = {5, 7, 4, 9};
  const char* two[] = {"data", "fc1_weight"};
  CHECK(failure(MXSymbolInferShape(net.get(), 2, two, bad_ind, bad, &in_n, &in_nd, &in_d, &out_n,
                                   &out_nd, &out_d, &aux_n, &aux_nd, &aux_d, &complete)) ==
        "MXSymbolInferShape: node 'fc1' (FullyConnected): input 'weight': shape (4, 9) conflicts "
        "with (4, 7)");
  const char* typo[] = {"dat"};
  CHECK(failure(MXSymbolInferShape(net.get(), 1, typo, ind, shape, &in_n, &in_nd, &in_d, &out_n,
                                   &out_nd, &out_d, &aux_n, &aux_nd, &aux_d, &complete)) ==
        "MXSymbolInferShape: infer_shape: 'dat' is not an argument of the symbol (did you mean "
        "'data'?)");
  CHECK(failure(MXSymbolInferShape(net.get(), 1, keys, nullptr, shape, &in_n, &in_nd, &in_d, &out_n,
                                   &out_nd, &out_d, &aux_n, &aux_nd, &aux_d, &complete)) ==
        "MXSymbolInferShape: arg_ind_ptr is NULL");
  CHECK(failure(MXSymbolInferShape(net.get(), 1, keys, ind, shape, &in_n, &in_nd, nullptr, &out_n,
                                   &out_nd, &out_d, &aux_n, &aux_nd, &aux_d, &complete)) ==
        "MXSymbolInferShape: an output pointer is NULL");
  CHECK(failure(MXSymbolInferShape(net.get(), 9, nullptr, ind, shape, &in_n, &in_nd, &in_d, &out_n,
                                   &out_nd, &out_d, &aux_n, &aux_nd, &aux_d, &complete)) ==
        "MXSymbolInferShape: 9 values given by position, but the symbol has 6 arguments");
  const int bad_type[] = {11};
  CHECK(failure(MXSymbolInferType(fc.get(), 1, wkey, bad_type, &ti, &tin, &to, &tout, &ta, &taux,
                                  &complete)) ==
        "MXSymbolInferType: the type of 'fc_weight' is 11 is not a type flag (0 float32, 1 "
        "float64, 2 float16, 3 uint8, 4 int32, 5 int8, 6 int64)");
}

TEST_CASE("C API: networks in mx's YAML language") {
  Sym net;
  MX_OK(
      MXSymbolCreateFromYAML("layers:\n"
                             "  - {op: FullyConnected, name: fc1, num_hidden: 8}\n"
                             "  - {op: Activation, name: a1, act_type: tanh}\n"
                             "  - {op: FullyConnected, name: fc2, num_hidden: 2}\n"
                             "  - {op: SoftmaxOutput, name: softmax}\n",
                             net.out()));
  CHECK(listed(MXSymbolListArguments, net.get()) ==
        std::vector<std::string>{"data", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias",
                                 "softmax_label"});
  Sym bad;
  CHECK(
      failure(MXSymbolCreateFromYAML("layers:\n  - {op: FullyConected, name: fc1}\n", bad.out())) ==
      "MXSymbolCreateFromYAML: YAML text:2:10: unknown operator 'FullyConected' (did you mean "
      "'FullyConnected'?) (mx-ops lists them all)");
  CHECK(failure(MXSymbolCreateFromYAML("layers: [", bad.out())) ==
        "MXSymbolCreateFromYAML: YAML text:1:1: end of sequence flow not found");
  CHECK(failure(MXSymbolCreateFromYAML(nullptr, bad.out())) ==
        "MXSymbolCreateFromYAML: yaml is NULL");
  CHECK(bad.get() == nullptr);
}

TEST_CASE("C API: symbol errors") {
  Sym s;
  CHECK(failure(MXSymbolCreateVariable(nullptr, s.out())) ==
        "MXSymbolCreateVariable: name is NULL");
  CHECK(failure(MXSymbolCreateFromJSON("{\"nodes\": [", s.out())) ==
        "MXSymbolCreateFromJSON: symbol JSON: not valid JSON at byte 12: "
        "[json.exception.parse_error.101] parse error at line 1, column 12: syntax error while "
        "parsing value - unexpected end of input; expected '[', '{', or a literal");
  CHECK(failure(MXSymbolCreateFromFile("/nonexistent/x.json", s.out())) ==
        "MXSymbolCreateFromFile: cannot open '/nonexistent/x.json': no such file");
  const char* keys[] = {"num_hiden"};
  const char* vals[] = {"3"};
  CHECK(failure(MXSymbolCreateAtomicSymbol(op_handle("FullyConnected"), 1, keys, vals, s.out())) ==
        "MXSymbolCreateAtomicSymbol: FullyConnected: unknown parameter 'num_hiden' (did you mean "
        "'num_hidden'?); parameters are: num_hidden, no_bias, flatten");
  CHECK(s.get() == nullptr);
  Sym atomic;
  const char* k2[] = {"num_hidden"};
  MX_OK(MXSymbolCreateAtomicSymbol(op_handle("FullyConnected"), 1, k2, vals, atomic.out()));
  // An atomic symbol is not a network yet.
  mx_uint n = 0;
  const char** names = nullptr;
  CHECK(failure(MXSymbolListArguments(atomic.get(), &n, &names)) ==
        "MXSymbolListArguments: symbol is an operator (FullyConnected) not yet applied to "
        "inputs: call MXSymbolCompose first");
  Sym x = variable("x");
  SymbolHandle inputs[] = {x.get()};
  CHECK(failure(MXSymbolCompose(atomic.get(), nullptr, 1, nullptr, inputs)) ==
        "MXSymbolCompose: name is NULL or empty");
  const char* wrong[] = {"weigth"};
  CHECK(failure(MXSymbolCompose(atomic.get(), "fc", 1, wrong, inputs)) ==
        "MXSymbolCompose: node 'fc' (FullyConnected): no input named 'weigth' (did you mean "
        "'weight'?); inputs are: data, weight, bias");
  SymbolHandle too_many[] = {x.get(), x.get(), x.get(), x.get()};
  CHECK(failure(MXSymbolCompose(atomic.get(), "fc", 4, nullptr, too_many)) ==
        "MXSymbolCompose: node 'fc' (FullyConnected): 4 inputs given, but it takes 3 (data, "
        "weight, bias)");
  MX_OK(MXSymbolCompose(atomic.get(), "fc", 1, nullptr, inputs));
  CHECK(failure(MXSymbolCompose(atomic.get(), "fc", 1, nullptr, inputs)) ==
        "MXSymbolCompose: sym is not an operator from MXSymbolCreateAtomicSymbol (or was "
        "composed already); mx composes operators only");
  CHECK(failure(MXSymbolCompose(x.get(), "fc", 1, nullptr, inputs)) ==
        "MXSymbolCompose: sym is not an operator from MXSymbolCreateAtomicSymbol (or was "
        "composed already); mx composes operators only");
  Nd array = make_array({1}, {0});
  CHECK(failure(MXSymbolListOutputs(array.get(), &n, &names)) ==
        "MXSymbolListOutputs: symbol is an NDArray handle, not a Symbol handle");
  CHECK(failure(MXSymbolGetOutput(x.get(), 3, s.out())) ==
        "MXSymbolGetOutput: output index 3 out of range: the symbol has 1 output(s)");
  CHECK(failure(MXSymbolGetNumOutputs(x.get(), nullptr)) ==
        "MXSymbolGetNumOutputs: output_count is NULL");
  CHECK(failure(MXSymbolListArguments(x.get(), nullptr, &names)) ==
        "MXSymbolListArguments: out_size or out_str_array is NULL");
  CHECK(failure(MXSymbolSaveToJSON(nullptr, nullptr)) == "MXSymbolSaveToJSON: out_json is NULL");
  CHECK(failure(MXSymbolCreateGroup(1, nullptr, s.out())) ==
        "MXSymbolCreateGroup: symbols is NULL");
  CHECK(failure(MXSymbolCopy(nullptr, s.out())) == "MXSymbolCopy: symbol is NULL");
  MX_OK(MXSymbolFree(nullptr));
}

namespace {

class Exec {
 public:
  Exec() = default;
  ~Exec() { MXExecutorFree(h_); }
  Exec(const Exec&) = delete;
  Exec& operator=(const Exec&) = delete;
  ExecutorHandle get() const { return h_; }
  ExecutorHandle* out() { return &h_; }

 private:
  ExecutorHandle h_ = nullptr;
};

std::vector<float> ramp(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>((i * 7) % 11) - 0.3f;
  return v;
}

}  // namespace

TEST_CASE("C API: executor bind, forward, backward, outputs; equal to autograd") {
  Sym net = mlp();
  // Arguments in list order: data (5, 7), fc1 (4, 7) (4), fc2 (3, 4) (3), label (5).
  std::vector<Nd> args;
  args.push_back(make_array({5, 7}, ramp(35, 0.1f)));
  args.push_back(make_array({4, 7}, ramp(28, 0.05f)));
  args.push_back(make_array({4}, ramp(4, 0.2f)));
  args.push_back(make_array({3, 4}, ramp(12, -0.1f)));
  args.push_back(make_array({3}, ramp(3, 0.3f)));
  args.push_back(make_array({5}, {0, 1, 2, 1, 0}));
  std::vector<Nd> grads;
  std::vector<NDArrayHandle> arg_h, grad_h;
  std::vector<mx_uint> reqs;
  for (size_t i = 0; i < args.size(); ++i) {
    arg_h.push_back(args[i].get());
    const bool param = i >= 1 && i <= 4;
    grads.push_back(param ? make_array(shape_of(args[i].get()),
                                       std::vector<float>(read(args[i].get()).size(), 0))
                          : Nd());
    grad_h.push_back(grads.back().get());
    reqs.push_back(param ? 1 : 0);
  }
  Exec exe;
  MX_OK(MXExecutorBind(net.get(), 1, 0, 6, arg_h.data(), grad_h.data(), reqs.data(), 0, nullptr,
                       exe.out()));
  MX_OK(MXExecutorForward(exe.get(), 1));
  MX_OK(MXExecutorBackward(exe.get(), 0, nullptr));
  mx_uint n_out = 0;
  NDArrayHandle* outs = nullptr;
  MX_OK(MXExecutorOutputs(exe.get(), &n_out, &outs));
  REQUIRE(n_out == 1);
  Nd out(outs[0]);
  CHECK(shape_of(out.get()) == std::vector<mx_uint>{5, 3});

  // The same step through autograd on the same arrays.
  std::vector<Nd> ag_grads;
  for (size_t i = 1; i <= 4; ++i) {
    ag_grads.push_back(
        make_array(shape_of(args[i].get()), std::vector<float>(read(args[i].get()).size(), 0)));
    NDArrayHandle v[] = {args[i].get()};
    NDArrayHandle g[] = {ag_grads.back().get()};
    mx_uint r[] = {1};
    MX_OK(MXAutogradMarkVariables(1, v, r, g));
  }
  int prev = 0;
  MX_OK(MXAutogradSetIsRecording(1, &prev));
  MX_OK(MXAutogradSetIsTraining(1, &prev));
  auto h1 = invoke("FullyConnected", {args[0].get(), args[1].get(), args[2].get()}, {"num_hidden"},
                   {"4"});
  auto a1 = invoke("Activation", {h1[0].get()}, {"act_type"}, {"relu"});
  auto h2 =
      invoke("FullyConnected", {a1[0].get(), args[3].get(), args[4].get()}, {"num_hidden"}, {"3"});
  auto y = invoke("SoftmaxOutput", {h2[0].get(), args[5].get()});
  MX_OK(MXAutogradSetIsRecording(0, &prev));
  MX_OK(MXAutogradSetIsTraining(0, &prev));
  NDArrayHandle heads[] = {y[0].get()};
  MX_OK(MXAutogradBackward(1, heads, nullptr, 0));
  CHECK(read(y[0].get()) == read(out.get()));
  for (size_t i = 0; i < 4; ++i) {
    INFO("argument ", i + 1);
    CHECK(read(ag_grads[i].get()) == read(grads[i + 1].get()));
    bool nonzero = false;
    for (float g : read(grads[i + 1].get())) nonzero = nonzero || g != 0;
    CHECK(nonzero);
  }

  // Head gradients on a non-loss output; BackwardEx; grad_req add.
  Sym x = variable("x");
  Sym sq = compose("square", "sq", {}, {}, {x.get()});
  Nd xv = make_array({2}, {3, 4}), xg = make_array({2}, {1, 1}), hg = make_array({2}, {10, 100});
  NDArrayHandle xa[] = {xv.get()};
  NDArrayHandle xga[] = {xg.get()};
  mx_uint add[] = {3};
  Exec e2;
  MX_OK(MXExecutorBindEX(sq.get(), 1, 0, 0, nullptr, nullptr, nullptr, 1, xa, xga, add, 0, nullptr,
                         nullptr, e2.out()));
  MX_OK(MXExecutorForward(e2.get(), 1));
  NDArrayHandle hga[] = {hg.get()};
  MX_OK(MXExecutorBackwardEx(e2.get(), 1, hga, 1));
  CHECK(read(xg.get()) == std::vector<float>{1 + 60, 1 + 800});
}

TEST_CASE("C API: executor errors") {
  Sym net = mlp();
  Nd a = make_array({5, 7}, ramp(35, 1));
  std::vector<NDArrayHandle> five(5, a.get());
  ExecutorHandle h = nullptr;
  CHECK(
      failure(MXExecutorBind(net.get(), 1, 0, 5, five.data(), nullptr, nullptr, 0, nullptr, &h)) ==
      "MXExecutorBind: in_args: 5 arrays for 6 (data, fc1_weight, fc1_bias, fc2_weight, "
      "fc2_bias, softmax_label)");
  std::vector<NDArrayHandle> six(6, a.get());
  CHECK(failure(MXExecutorBind(net.get(), 1, 0, 6, six.data(), nullptr, nullptr, 0, nullptr, &h)) ==
        "MXExecutorBind: node 'fc1' (FullyConnected): input 'bias': shape (5, 7) conflicts with "
        "(4,)");
  six[2] = nullptr;
  CHECK(failure(MXExecutorBind(net.get(), 1, 0, 6, six.data(), nullptr, nullptr, 0, nullptr, &h)) ==
        "MXExecutorBind: in_args[2] is NULL");
  std::vector<mx_uint> bad_req(6, 7);
  six[2] = a.get();
  CHECK(failure(MXExecutorBind(net.get(), 1, 0, 6, six.data(), nullptr, bad_req.data(), 0, nullptr,
                               &h)) ==
        "MXExecutorBind: grad_req_type[0] is 7, not 0 (null), 1 (write), 2 (write in place) or 3 "
        "(add)");
  std::vector<mx_uint> write(6, 1);
  CHECK(failure(MXExecutorBind(net.get(), 1, 0, 6, six.data(), nullptr, write.data(), 0, nullptr,
                               &h)) ==
        "MXExecutorBind: arg_grad_store[0] ('data') is NULL, but its grad_req_type is 1");
  CHECK(failure(MXExecutorBind(net.get(), 1, 0, 6, six.data(), nullptr, nullptr, 1, six.data(),
                               &h)) == "MXExecutorBind: aux_states: 1 arrays for 0 ()");
  const char* map_keys[] = {"dev1"};
  const int map_types[] = {1}, map_ids[] = {0};
  CHECK(failure(MXExecutorBindEX(net.get(), 1, 0, 1, map_keys, map_types, map_ids, 6, six.data(),
                                 nullptr, nullptr, 0, nullptr, nullptr, &h)) ==
        "MXExecutorBindEX: num_map_keys must be 0: mx binds a symbol to one device (no "
        "group2ctx)");
  CHECK(failure(MXExecutorBind(net.get(), 1, 0, 6, six.data(), nullptr, nullptr, 0, nullptr,
                               nullptr)) == "MXExecutorBind: out is NULL");
  CHECK(h == nullptr);

  // Inference bind: backward is refused; forward must come first.
  Sym x = variable("x");
  Sym sq = compose("square", "sq", {}, {}, {x.get()});
  Nd xv = make_array({2}, {3, 4});
  NDArrayHandle xa[] = {xv.get()};
  Exec e;
  MX_OK(MXExecutorBind(sq.get(), 1, 0, 1, xa, nullptr, nullptr, 0, nullptr, e.out()));
  CHECK(failure(MXExecutorBackward(e.get(), 0, nullptr)) ==
        "MXExecutorBackward: backward: the executor was bound for inference (for_training = "
        "false)");
  Nd g = make_array({2}, {0, 0});
  NDArrayHandle ga[] = {g.get()};
  mx_uint w1[] = {1};
  Exec t;
  MX_OK(MXExecutorBind(sq.get(), 1, 0, 1, xa, ga, w1, 0, nullptr, t.out()));
  CHECK(failure(MXExecutorBackward(t.get(), 0, nullptr)) ==
        "MXExecutorBackward: backward: call forward(is_train = true) first");
  MX_OK(MXExecutorForward(t.get(), 1));
  NDArrayHandle two_heads[] = {g.get(), g.get()};
  CHECK(failure(MXExecutorBackward(t.get(), 2, two_heads)) ==
        "MXExecutorBackward: 2 head gradients for 1 outputs");
  Nd wrong = make_array({3}, {1, 1, 1});
  NDArrayHandle wrong_head[] = {wrong.get()};
  CHECK(failure(MXExecutorBackward(t.get(), 1, wrong_head)) ==
        "MXExecutorBackward: backward: head gradient 0 has shape (3,), output is (2,)");
  CHECK(failure(MXExecutorBackwardEx(t.get(), 0, nullptr, 0)) ==
        "MXExecutorBackwardEx: is_train 0 is not supported: the backward pass follows a training "
        "forward pass (MXExecutorForward with is_train 1)");
  mx_uint n = 0;
  CHECK(failure(MXExecutorOutputs(t.get(), &n, nullptr)) ==
        "MXExecutorOutputs: out_size or out is NULL");
  CHECK(failure(MXExecutorForward(nullptr, 1)) == "MXExecutorForward: handle is NULL");
  CHECK(failure(MXExecutorForward(x.get(), 1)) ==
        "MXExecutorForward: handle is a Symbol handle, not an Executor handle");
  MX_OK(MXExecutorFree(nullptr));
}

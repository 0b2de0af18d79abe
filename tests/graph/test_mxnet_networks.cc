// Networks built, bound and run by real MXNet 1.9.1 (scripts/fixtures/make_graph_fixtures.py):
// the same symbol JSON and parameters must give the same outputs, gradients
// and updated auxiliary states in mx.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "compare.h"
#include "executor/executor.h"
#include "ndarray/params_io.h"

using namespace mx;
using namespace mx::graph;

namespace {

const std::string kDir = std::string(MX_FIXTURES_DIR) + "/graph/";

void check_close(const NDArray& got, const NDArray& want, const std::string& what) {
  INFO(what);
  REQUIRE(got.shape() == want.shape());
  const auto a = got.to_vector<float>(), b = want.to_vector<float>();
  const std::vector<double> x(a.begin(), a.end()), y(b.begin(), b.end());
  const test::Closeness c = test::compare_values(x, y, 1e-3, 1e-4);
  INFO("worst element ", c.index, ": mx ", x.empty() ? 0.0 : x[c.index], " MXNet ",
       y.empty() ? 0.0 : y[c.index]);
  CHECK(c.worst <= 1.0);
}

}  // namespace

TEST_CASE("networks exported by MXNet 1.9.1 give MXNet's outputs, gradients and statistics") {
  for (const std::string name :
       {"mlp", "lenet", "resblock", "inception", "multi_output", "seq_tensor", "gluon_lstm",
        "gluon_gru", "gluon_rnn", "fused_lstm", "bert_encoder", "chargpt"}) {
    CAPTURE(name);
    Symbol sym = Symbol::load(kDir + name + "-symbol.json");
    NamedArrays run = load_params(kDir + name + "-run.params");
    auto has = [&](const std::string& key) {
      return std::find(run.names.begin(), run.names.end(), key) != run.names.end();
    };
    std::map<std::string, NDArray> args, grads, aux;
    BindOptions options;
    for (const auto& n : sym.list_arguments()) {
      args[n] = run.get("arg:" + n).copy();
      grads[n] = NDArray::zeros(args[n].shape());
      // Token ids (chargpt's data) have no gradient in MXNet's run.
      if (!has("grad:" + n)) options.grad_req[n] = GradReq::kNull;
    }
    for (const auto& n : sym.list_auxiliary_states()) aux[n] = run.get("aux:" + n).copy();
    Executor exe(sym, args, grads, aux, options);
    exe.forward(true);
    std::vector<NDArray> heads;
    for (size_t k = 0; k < exe.outputs().size(); ++k) {
      check_close(exe.outputs()[k], run.get("out:" + std::to_string(k)),
                  "output " + std::to_string(k));
      heads.push_back(run.get("head:" + std::to_string(k)));
    }
    exe.backward(heads);
    for (const auto& n : sym.list_arguments())
      if (has("grad:" + n))
        check_close(exe.grad_dict().at(n), run.get("grad:" + n), "gradient of " + n);
    for (const auto& n : sym.list_auxiliary_states())
      check_close(exe.aux_dict().at(n), run.get("auxafter:" + n),
                  "auxiliary state " + n + " after training");
  }
}

// Optimizers, learning-rate schedules and initializers against MXNet 1.9.1
// (fixtures from scripts/fixtures/make_optim_fixtures.py) and their own
// contracts: counters, multipliers, state save/load, seeds, error messages.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/strings.h"
#include "compare.h"
#include "engine/engine.h"
#include "ndarray/ndarray.h"
#include "ndarray/params_io.h"
#include "optim/initializer.h"
#include "optim/lr_scheduler.h"
#include "optim/optimizer.h"
#include "optim/optimizers.h"
#include "temp_dir.h"

using namespace mx;
using namespace mx::optim;

namespace {

const std::string kFixtures = std::string(MX_FIXTURES_DIR) + "/optim/";
constexpr int kSteps = 4;
const std::vector<std::string> kParamNames = {"fc1_weight", "fc1_bias", "bn1_gamma"};

// One line of a .cases file: the first `positional` fields, then key=value.
struct CaseLine {
  std::vector<std::string> head;
  std::vector<std::pair<std::string, std::string>> fields;
};

std::vector<CaseLine> read_cases(const std::string& file, size_t positional) {
  std::ifstream in(kFixtures + file);
  REQUIRE_MESSAGE(in.good(), "cannot open fixture ", kFixtures + file);
  std::vector<CaseLine> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    CaseLine c;
    auto parts = split(line, '\t');
    for (size_t i = 0; i < parts.size(); ++i) {
      if (i < positional) {
        c.head.push_back(parts[i]);
        continue;
      }
      auto eq = parts[i].find('=');
      REQUIRE(eq != std::string::npos);
      c.fields.emplace_back(parts[i].substr(0, eq), parts[i].substr(eq + 1));
    }
    cases.push_back(std::move(c));
  }
  REQUIRE(!cases.empty());
  return cases;
}

std::vector<double> values_of(const NDArray& a) {
  if (a.dtype() == DType::kFloat64) return a.to_vector<double>();
  auto f = a.to_vector<float>();
  return {f.begin(), f.end()};
}

NDArray as_dtype(const NDArray& a, DType dtype) {
  auto v = values_of(a);
  if (dtype == DType::kFloat64) return NDArray::from_vector<double>(a.shape(), v);
  return NDArray::from_vector<float>(a.shape(), std::vector<float>(v.begin(), v.end()));
}

// Max over elements of |a - b| / (atol + rtol |b|); <= 1 means close (NaN
// and one-sided infinities are never close).
double closeness(const NDArray& a, const NDArray& b, double rtol, double atol) {
  REQUIRE(a.shape() == b.shape());
  return test::closeness(values_of(a), values_of(b), rtol, atol);
}

// An optimizer (with names, multipliers and schedule) from a fixture line.
std::unique_ptr<Optimizer> optimizer_from_case(const CaseLine& c) {
  std::map<std::string, std::string> opt, sched, lr_mult_text, wd_mult_text;
  for (const auto& [key, value] : c.fields) {
    auto dot = key.find('.');
    const std::string group = key.substr(0, dot), name = key.substr(dot + 1);
    if (group == "opt")
      opt[name] = value;
    else if (group == "sched")
      sched[name] = value;
    else if (group == "lr_mult")
      lr_mult_text[name] = value;
    else if (group == "wd_mult")
      wd_mult_text[name] = value;
  }
  auto optimizer = make_optimizer(c.head[1], opt);
  std::map<int, std::string> idx2name;
  for (int i = 0; i < static_cast<int>(kParamNames.size()); ++i) idx2name[i] = kParamNames[i];
  optimizer->set_param_names(idx2name);
  std::map<std::string, double> lr_mult, wd_mult;
  for (const auto& [k, v] : lr_mult_text) lr_mult[k] = std::stod(v);
  for (const auto& [k, v] : wd_mult_text) wd_mult[k] = std::stod(v);
  optimizer->set_lr_mult(lr_mult);
  optimizer->set_wd_mult(wd_mult);
  if (!sched.empty()) {
    const std::string type = sched.at("type");
    sched.erase("type");
    const double base_lr = std::stod(optimizer->params().at("learning_rate"));
    optimizer->set_lr_scheduler(make_lr_scheduler(type, sched, base_lr));
  }
  return optimizer;
}

void run_optimizer_case(const CaseLine& c, const NamedArrays& fx, DType dtype, double rtol,
                        double atol) {
  const std::string id = c.head[0];
  INFO("case ", id, " (", c.head[1], "), ", std::string(dtype_name(dtype)));
  Updater updater(optimizer_from_case(c));
  std::vector<NDArray> weights;
  for (size_t i = 0; i < kParamNames.size(); ++i)
    weights.push_back(as_dtype(fx.get(str(id, ":p", i, ":init")), dtype));
  for (int s = 1; s <= kSteps; ++s) {
    for (size_t i = 0; i < kParamNames.size(); ++i) {
      NDArray grad = as_dtype(fx.get(str(id, ":p", i, ":grad", s)), dtype);
      updater(static_cast<int>(i), grad, weights[i]);
      INFO("parameter ", kParamNames[i], ", step ", s);
      CHECK(closeness(weights[i], fx.get(str(id, ":p", i, ":after", s)), rtol, atol) <= 1.0);
      const auto& state = updater.state(static_cast<int>(i));
      for (size_t k = 0; k < state.size(); ++k) {
        INFO("state ", updater.optimizer().state_names()[k]);
        CHECK(closeness(state[k], fx.get(str(id, ":p", i, ":state", k, ":after", s)), rtol, atol) <=
              1.0);
      }
      // Exactly the states MXNet keeps: none beyond those checked above.
      const std::string next = str(id, ":p", i, ":state", state.size(), ":after", s);
      CHECK(std::find(fx.names.begin(), fx.names.end(), next) == fx.names.end());
    }
  }
  CHECK(updater.optimizer().num_update() ==
        kSteps + std::stoll(updater.optimizer().params().at("begin_num_update")));
}

}  // namespace

// --- optimizers against MXNet ---------------------------------------------------------

TEST_CASE("optimizers: every case equals MXNet 1.9.1 step by step (float32)") {
  const auto cases = read_cases("optim.cases", 2);
  const NamedArrays fx = load_params(kFixtures + "optim.params");
  std::set<std::string> optimizers;
  for (const auto& c : cases) {
    run_optimizer_case(c, fx, DType::kFloat32, 1e-5, 1e-6);
    optimizers.insert(c.head[1]);
  }
  // Every optimizer is covered by the fixtures.
  for (const auto& name : optimizer_names()) CHECK(optimizers.count(name) == 1);
}

TEST_CASE("optimizers: float64 updates follow the same formulas") {
  const auto cases = read_cases("optim.cases", 2);
  const NamedArrays fx = load_params(kFixtures + "optim.params");
  // MXNet computed in float32; float64 differs from it only by that rounding.
  for (const auto& c : cases) run_optimizer_case(c, fx, DType::kFloat64, 1e-4, 1e-5);
}

TEST_CASE("optimizers: one update is an engine operation ordered with other work") {
  auto opt = make_optimizer("sgd", {{"learning_rate", "0.5"}, {"momentum", "0.9"}});
  Updater updater(std::move(opt));
  const int64_t n = 100000;  // several parallel chunks
  NDArray weight = NDArray::full({n}, 1.0);
  NDArray grad = NDArray::zeros({n});
  grad += 2.0;  // pushed before the update, which must see it
  updater(0, grad, weight);
  grad *= 0.0;  // pushed after: must not change what the update read
  auto w = weight.to_vector<float>();
  CHECK(w.front() == doctest::Approx(0.0));  // 1 - 0.5 * 2
  CHECK(w.back() == doctest::Approx(0.0));
  auto mom = updater.state(0)[0].to_vector<float>();
  CHECK(mom[n / 2] == doctest::Approx(-1.0));
  // A second step: mom = 0.9 * -1 - 0.5 * 0 = -0.9.
  updater(0, grad, weight);
  CHECK(weight.to_vector<float>()[7] == doctest::Approx(-0.9));
}

// --- bookkeeping ------------------------------------------------------------------------

TEST_CASE("optimizers: weight decay and learning-rate multipliers follow MXNet's defaults") {
  auto opt = make_optimizer("sgd", {{"learning_rate", "0.1"}, {"wd", "0.01"}});
  opt->set_param_names({{0, "fc1_weight"},
                        {1, "fc1_bias"},
                        {2, "bn1_gamma"},
                        {3, "bn1_beta"},
                        {4, "embed_weight"},
                        {5, "prelu_alpha"}});
  CHECK(opt->wd_for(0) == doctest::Approx(0.01));
  CHECK(opt->wd_for(1) == 0.0);                    // biases: no decay
  CHECK(opt->wd_for(2) == doctest::Approx(0.01));  // gammas decay like weights in MXNet 1.9.1
  CHECK(opt->wd_for(3) == 0.0);
  CHECK(opt->wd_for(5) == 0.0);
  CHECK(opt->wd_for(99) == doctest::Approx(0.01));  // no name: decayed
  opt->set_wd_mult({{"fc1_bias", 2.0}, {"fc1_weight", 0.5}});
  CHECK(opt->wd_for(1) == doctest::Approx(0.02));
  CHECK(opt->wd_for(0) == doctest::Approx(0.005));
  CHECK(opt->wd_for(3) == 0.0);  // the default rule still holds for the others
  opt->set_lr_mult({{"embed_weight", 10.0}});
  CHECK(opt->lr_for(4) == doctest::Approx(1.0));
  CHECK(opt->lr_for(0) == doctest::Approx(0.1));
  opt->set_lr_mult({});  // replaces, as MXNet's set_lr_mult
  CHECK(opt->lr_for(4) == doctest::Approx(0.1));
}

TEST_CASE("optimizers: update counts per index, num_update is their maximum") {
  auto opt = make_optimizer("adam", {{"begin_num_update", "10"}});
  auto w0 = NDArray::zeros({3}), w1 = NDArray::zeros({3}), g = NDArray::full({3}, 1.0);
  auto s0 = opt->create_state(0, w0), s1 = opt->create_state(1, w1);
  REQUIRE(s0.size() == 2);
  CHECK(opt->update_count(0) == 0);
  opt->update(0, w0, g, s0);
  opt->update(0, w0, g, s0);
  opt->update(1, w1, g, s1);
  CHECK(opt->update_count(0) == 12);
  CHECK(opt->update_count(1) == 11);
  CHECK(opt->num_update() == 12);
  // Adam's t is the index's own count: index 1's first update ran at t = 11
  // although num_update was 12 then, so it equals a lone first update.
  auto a = make_optimizer("adam", {{"begin_num_update", "10"}});
  auto w2 = NDArray::zeros({3});
  auto s2 = a->create_state(0, w2);
  a->update(0, w2, g, s2);
  CHECK(w2.to_vector<float>() == w1.to_vector<float>());
}

TEST_CASE("optimizers: the schedule decides the rate at num_update") {
  auto opt = make_optimizer("sgd", {{"learning_rate", "0.1"}});
  CHECK(opt->learning_rate() == doctest::Approx(0.1));
  opt->set_learning_rate(0.2);
  CHECK(opt->learning_rate() == doctest::Approx(0.2));
  opt->set_lr_scheduler(make_lr_scheduler("factor", {{"step", "1"}, {"factor", "0.5"}}, 0.2));
  CHECK_THROWS_AS(opt->set_learning_rate(0.3), InputError);
  auto w = NDArray::zeros({1}), g = NDArray::full({1}, 1.0);
  std::vector<NDArray> none;
  opt->update(0, w, g, none);  // num_update 1: 0.2
  opt->update(0, w, g, none);  // num_update 2: 0.1
  opt->update(0, w, g, none);  // num_update 3: 0.05
  CHECK(w.to_vector<float>()[0] == doctest::Approx(-0.35));
  CHECK(opt->learning_rate() == doctest::Approx(0.05));
}

// --- state save / load ------------------------------------------------------------------

namespace {

struct Run {
  std::unique_ptr<Updater> updater;
  std::vector<NDArray> weights;
};

Run make_run(const std::string& name, const std::map<std::string, std::string>& params,
             bool schedule) {
  Run r;
  auto opt = make_optimizer(name, params);
  opt->set_param_names({{0, "fc_weight"}, {1, "fc_bias"}});
  if (schedule)
    opt->set_lr_scheduler(
        make_lr_scheduler("factor", {{"step", "2"}, {"factor", "0.7"}, {"warmup_steps", "1"}},
                          std::stod(opt->params().at("learning_rate"))));
  r.updater = std::make_unique<Updater>(std::move(opt));
  r.weights = {NDArray::from_vector<float>({2, 3}, {0.5f, -0.2f, 0.1f, 0.9f, -0.7f, 0.3f}),
               NDArray::from_vector<float>({3}, {0.1f, 0.2f, -0.3f})};
  return r;
}

NDArray grad_for(int step, int index, const Shape& shape) {
  std::vector<float> v(static_cast<size_t>(shape.size()));
  for (size_t k = 0; k < v.size(); ++k)
    v[k] = std::sin(static_cast<float>(1 + step * 7 + index * 13 + static_cast<int>(k) * 3));
  return NDArray::from_vector<float>(shape, v);
}

void steps(Run& r, int from, int to) {
  for (int s = from; s < to; ++s)
    for (int i = 0; i < 2; ++i) (*r.updater)(i, grad_for(s, i, r.weights[i].shape()), r.weights[i]);
}

}  // namespace

TEST_CASE("optimizers: saved states resume exactly") {
  const test::TempDir scratch("optim_states");
  const auto& dir = scratch.path();
  struct Config {
    std::string name;
    std::map<std::string, std::string> params;
    bool schedule;
  };
  const std::vector<Config> configs = {
      {"sgd", {{"learning_rate", "0.1"}, {"momentum", "0.9"}, {"wd", "0.01"}}, true},
      {"sgd", {{"learning_rate", "0.1"}}, false},
      {"nag", {{"momentum", "0.8"}}, true},
      {"adam", {{"learning_rate", "0.01"}, {"begin_num_update", "2"}}, true},
      {"adamw", {{"wd", "0.1"}}, false},
      {"rmsprop", {{"centered", "True"}}, true},
      {"adagrad", {{"wd", "0.001"}}, false}};
  for (const auto& cfg : configs) {
    INFO("optimizer ", cfg.name);
    Run straight = make_run(cfg.name, cfg.params, cfg.schedule);
    steps(straight, 0, 6);

    Run first = make_run(cfg.name, cfg.params, cfg.schedule);
    steps(first, 0, 3);
    const std::string path = (dir / (cfg.name + ".states")).string();
    first.updater->save_states(path);
    CHECK(std::filesystem::exists(path + ".json"));
    // The arrays are an ordinary .params list ("INDEX:STATE").
    const NamedArrays saved = load_params(path);
    CHECK(saved.arrays.size() == 2 * first.updater->optimizer().state_names().size());

    Run resumed = make_run(cfg.name, cfg.params, cfg.schedule);
    resumed.weights = {first.weights[0].copy(), first.weights[1].copy()};
    resumed.updater->load_states(path);
    CHECK(resumed.updater->optimizer().num_update() == first.updater->optimizer().num_update());
    steps(resumed, 3, 6);
    for (int i = 0; i < 2; ++i)
      CHECK(resumed.weights[i].to_vector<float>() == straight.weights[i].to_vector<float>());
  }
}

TEST_CASE("optimizers: loading states that do not fit gives clear errors") {
  const test::TempDir scratch("optim_bad_states");
  const auto& dir = scratch.path();
  const std::string path = (dir / "a.states").string();
  Run adam = make_run("adam", {}, false);
  steps(adam, 0, 2);
  adam.updater->save_states(path);

  Run sgd = make_run("sgd", {{"momentum", "0.9"}}, false);
  CHECK_THROWS_WITH_AS(sgd.updater->load_states(path),
                       doctest::Contains("saved by optimizer 'adam' but this run uses 'sgd'"),
                       InputError);
  Run scheduled = make_run("adam", {}, true);
  CHECK_THROWS_WITH_AS(scheduled.updater->load_states(path),
                       doctest::Contains("without an lr_scheduler"), InputError);
  CHECK_THROWS_WITH_AS(sgd.updater->load_states((dir / "missing.states").string()),
                       doctest::Contains("missing.states.json"), InputError);

  // Momentum on in the file, off now: the state layout differs.
  const std::string mom_path = (dir / "m.states").string();
  Run with_mom = make_run("sgd", {{"momentum", "0.9"}}, false);
  steps(with_mom, 0, 1);
  with_mom.updater->save_states(mom_path);
  Run without_mom = make_run("sgd", {}, false);
  CHECK_THROWS_WITH_AS(without_mom.updater->load_states(mom_path),
                       doctest::Contains("saved with state arrays [mom]"), InputError);

  // A header next to arrays from another save (e.g. a crash between the
  // two renames) is refused.
  std::filesystem::copy_file(mom_path, path, std::filesystem::copy_options::overwrite_existing);
  CHECK_THROWS_WITH_AS(adam.updater->load_states(path), doctest::Contains("does not describe"),
                       InputError);
  std::ofstream(path + ".json") << "{ not json";
  CHECK_THROWS_WITH_AS(adam.updater->load_states(path), doctest::Contains("not valid JSON"),
                       InputError);
}

TEST_CASE("optimizers: bad parameters and arrays give clear errors") {
  CHECK_THROWS_WITH_AS(make_optimizer("adamm", {}), doctest::Contains("did you mean 'adam'"),
                       InputError);
  CHECK_THROWS_WITH_AS(make_optimizer("sgd", {{"momentun", "0.9"}}),
                       doctest::Contains("did you mean 'momentum'"), InputError);
  CHECK_THROWS_WITH_AS(make_optimizer("sgd", {{"momentum", "1.5"}}),
                       doctest::Contains("'momentum'"), InputError);
  CHECK_THROWS_WITH_AS(make_optimizer("adam", {{"beta1", "1"}}), doctest::Contains("beta1"),
                       InputError);
  CHECK_THROWS_WITH_AS(make_optimizer("rmsprop", {{"centered", "maybe"}}),
                       doctest::Contains("'centered'"), InputError);
  CHECK_THROWS_AS(make_optimizer("adagrad", {{"epsilon", "1e-6"}}), InputError);  // MXNet: eps
  CHECK_NOTHROW(make_optimizer("SGD", {{"lazy_update", "False"}, {"clip_gradient", "None"}}));

  auto opt = make_optimizer("sgd", {{"momentum", "0.9"}});
  NDArray w = NDArray::zeros({4});
  auto state = opt->create_state(0, w);
  CHECK_THROWS_WITH_AS(opt->update(0, w, NDArray::zeros({5}), state),
                       doctest::Contains("gradient is float32 (5,)"), Error);
  std::vector<NDArray> none;
  CHECK_THROWS_WITH_AS(opt->update(0, w, NDArray::zeros({4}), none),
                       doctest::Contains("0 state arrays given, 1 expected"), Error);
  NDArray h = NDArray::zeros({4}, Context::cpu(), DType::kFloat16);
  CHECK_THROWS_WITH_AS(opt->update(0, h, h, state), doctest::Contains("float32 or float64"), Error);
  CHECK(opt->update_count(0) == 0);  // failed calls do not count
}

TEST_CASE("optimizers: SGD rescales the gradient with and without clipping") {
  // mom = 0.9 * 0 - 0.1 * 0 * w - 0.1 * clip(0.5 * 2) = -0.1; w = 1 + mom.
  for (const char* clip : {"None", "10"}) {
    CAPTURE(clip);
    Updater updater(make_optimizer("sgd", {{"learning_rate", "0.1"},
                                           {"momentum", "0.9"},
                                           {"rescale_grad", "0.5"},
                                           {"clip_gradient", clip}}));
    NDArray weight = NDArray::full({3}, 1.0);
    NDArray grad = NDArray::full({3}, 2.0);
    updater(0, grad, weight);
    CHECK(weight.to_vector<float>()[1] == doctest::Approx(0.9));
  }
}

TEST_CASE("optimizers: SGD's default rate and momentum range are MXNet's") {
  CHECK(make_optimizer("sgd", {})->learning_rate() == doctest::Approx(0.01));
  // momentum is in [0, 1]: both ends and values just inside are accepted.
  for (const char* ok : {"0", "0.05", "0.95", "1"})
    CHECK_NOTHROW(make_optimizer("sgd", {{"momentum", ok}}));
  for (const char* bad : {"-0.05", "1.05"})
    CHECK_THROWS_WITH_AS(make_optimizer("sgd", {{"momentum", bad}}),
                         doctest::Contains("'momentum'"), InputError);
}

// --- learning-rate schedules --------------------------------------------------------------

TEST_CASE("lr schedules: the rates equal MXNet's for every call sequence") {
  for (const auto& c : read_cases("schedules.cases", 2)) {
    INFO("schedule ", c.head[0]);
    std::map<std::string, std::string> params;
    std::vector<std::string> updates, lrs;
    double base_lr = 0;
    for (const auto& [k, v] : c.fields) {
      if (k == "base_lr")
        base_lr = std::stod(v);
      else if (k == "updates")
        updates = split(v, ',');
      else if (k == "lrs")
        lrs = split(v, ',');
      else
        params[k] = v;
    }
    REQUIRE(updates.size() == lrs.size());
    auto sched = make_lr_scheduler(c.head[1], params, base_lr);
    for (size_t i = 0; i < updates.size(); ++i) {
      INFO("num_update ", updates[i]);
      CHECK((*sched)(std::stoll(updates[i])) == doctest::Approx(std::stod(lrs[i])).epsilon(1e-12));
    }
  }
}

TEST_CASE("lr schedules: the position is saved and restored") {
  auto a = make_lr_scheduler("multifactor", {{"step", "(2, 4, 6)"}, {"factor", "0.5"}}, 1.0);
  for (int n = 1; n <= 5; ++n) (*a)(n);
  const nlohmann::json state = a->state();
  CHECK(state["type"] == "multifactor");
  // Re-parsed from text, as it is read from a header file.
  auto b = make_lr_scheduler("multifactor", {{"step", "(2, 4, 6)"}, {"factor", "0.5"}}, 1.0);
  b->load_state(nlohmann::json::parse(state.dump()), "test");
  for (int n = 6; n <= 9; ++n) CHECK((*b)(n) == (*a)(n));
  CHECK((*b)(9) == doctest::Approx(0.125));
  auto c = make_lr_scheduler("cosine", {{"max_update", "10"}}, 1.0);
  CHECK_THROWS_WITH_AS(c->load_state(state, "test.json"),
                       doctest::Contains("saved learning-rate schedule is 'multifactor'"),
                       InputError);
}

TEST_CASE("lr schedules: bad parameters give clear errors") {
  CHECK_THROWS_WITH_AS(make_lr_scheduler("factr", {}, 0.1),
                       doctest::Contains("did you mean 'factor'"), InputError);
  CHECK_THROWS_WITH_AS(make_lr_scheduler("factor", {}, 0.1),
                       doctest::Contains("required parameter 'step'"), InputError);
  CHECK_THROWS_WITH_AS(make_lr_scheduler("factor", {{"step", "0"}}, 0.1),
                       doctest::Contains("'step'"), InputError);
  CHECK_THROWS_WITH_AS(make_lr_scheduler("factor", {{"step", "2"}, {"factor", "2"}}, 0.1),
                       doctest::Contains("'factor'"), InputError);
  CHECK_THROWS_WITH_AS(make_lr_scheduler("multifactor", {{"step", "(5, 3)"}}, 0.1),
                       doctest::Contains("strictly increasing"), InputError);
  CHECK_THROWS_WITH_AS(make_lr_scheduler("poly", {{"max_update", "5"}, {"warmup_steps", "5"}}, 0.1),
                       doctest::Contains("max_update (5) must be larger than warmup_steps (5)"),
                       InputError);
  CHECK_THROWS_WITH_AS(
      make_lr_scheduler("cosine", {{"max_update", "5"}, {"warmup_begin_lr", "0.5"}}, 0.1),
      doctest::Contains("warmup_begin_lr (0.5) must not exceed"), InputError);
  CHECK_THROWS_WITH_AS(
      make_lr_scheduler("cosine", {{"max_update", "5"}, {"warmup_mode", "cubic"}}, 0.1),
      doctest::Contains("'warmup_mode'"), InputError);
}

// --- initializers ---------------------------------------------------------------------------

namespace {

struct Moments {
  double mean = 0, var = 0, max_abs = 0, within_one_sigma = 0;
};

Moments moments(const NDArray& a) {
  auto v = values_of(a);
  Moments m;
  for (double x : v) m.mean += x;
  m.mean /= static_cast<double>(v.size());
  for (double x : v) {
    m.var += (x - m.mean) * (x - m.mean);
    m.max_abs = std::max(m.max_abs, std::abs(x));
  }
  m.var /= static_cast<double>(v.size());
  const double sd = std::sqrt(m.var);
  for (double x : v) m.within_one_sigma += std::abs(x - m.mean) <= sd ? 1 : 0;
  m.within_one_sigma /= static_cast<double>(v.size());
  return m;
}

// Checks mean 0 and the variance within 2% for a large tensor; `uniform`
// also checks the bound and the share within one sigma (0.577 uniform, 0.683 normal).
void check_distribution(const NDArray& a, double variance, bool uniform) {
  const Moments m = moments(a);
  const double n = static_cast<double>(a.size());
  CHECK(std::abs(m.mean) < 5 * std::sqrt(variance / n));
  CHECK(m.var == doctest::Approx(variance).epsilon(0.02));
  if (uniform) {
    CHECK(m.max_abs <= std::sqrt(3 * variance) * (1 + 1e-6));
    CHECK(m.within_one_sigma == doctest::Approx(1 / std::sqrt(3.0)).epsilon(0.01));
  } else {
    CHECK(m.max_abs > 4 * std::sqrt(variance));  // tails exist
    CHECK(m.within_one_sigma == doctest::Approx(0.6827).epsilon(0.01));
  }
}

}  // namespace

TEST_CASE("initializers: distributions match their formulas on large tensors") {
  const Shape conv{256, 64, 3, 3};  // fan_in 576, fan_out 2304
  const double fan_in = 576, fan_out = 2304, avg = (fan_in + fan_out) / 2;
  NDArray a(conv);
  SUBCASE("xavier uniform avg") {
    make_initializer("xavier", {}, 1)->init_weight("conv_weight", a);
    check_distribution(a, 3.0 / avg / 3.0, true);
  }
  SUBCASE("xavier gaussian in, magnitude 2") {
    make_initializer("xavier",
                     {{"rnd_type", "gaussian"}, {"factor_type", "in"}, {"magnitude", "2"}}, 2)
        ->init_weight("conv_weight", a);
    check_distribution(a, 2.0 / fan_in, false);
  }
  SUBCASE("xavier uniform out") {
    make_initializer("xavier", {{"factor_type", "out"}}, 3)->init_weight("conv_weight", a);
    check_distribution(a, 3.0 / fan_out / 3.0, true);
  }
  SUBCASE("msraprelu (He): gaussian, magnitude 2 / (1 + slope^2)") {
    make_initializer("msraprelu", {{"factor_type", "in"}, {"slope", "0"}}, 4)
        ->init_weight("conv_weight", a);
    check_distribution(a, 2.0 / fan_in, false);
    make_initializer("he", {}, 5)->init_weight("conv_weight", a);
    check_distribution(a, 2.0 / (1 + 0.0625) / avg, false);
  }
  SUBCASE("uniform and normal") {
    make_initializer("uniform", {{"scale", "0.5"}}, 6)->init_weight("w", a);
    check_distribution(a, 0.25 / 3, true);
    make_initializer("normal", {{"sigma", "0.2"}}, 7)->init_weight("w", a);
    check_distribution(a, 0.04, false);
  }
  SUBCASE("float64 and float16 arrays") {
    NDArray d(conv, Context::cpu(), DType::kFloat64);
    make_initializer("normal", {{"sigma", "3"}}, 8)->init_weight("w", d);
    check_distribution(d, 9.0, false);
    NDArray h({1000}, Context::cpu(), DType::kFloat16);
    make_initializer("uniform", {{"scale", "2"}}, 9)->init_weight("w", h);
    for (auto x : h.to_vector<half_t>()) CHECK(std::abs(static_cast<float>(x)) <= 2.0f);
  }
}

TEST_CASE("initializers: name rules as in MXNet") {
  auto init = make_initializer("xavier", {}, 1);
  auto check_all = [](const NDArray& a, float v) {
    for (float x : a.to_vector<float>()) CHECK(x == v);
  };
  NDArray b = NDArray::full({4}, 7.0), g = NDArray::full({4}, 7.0), be = NDArray::full({4}, 7.0),
          mm = NDArray::full({4}, 7.0), mv = NDArray::full({4}, 7.0), w(Shape{4, 5});
  (*init)("fc1_bias", b);
  (*init)("bn1_gamma", g);
  (*init)("bn1_beta", be);
  (*init)("bn1_moving_mean", mm);
  (*init)("bn1_moving_var", mv);
  (*init)("fc1_weight", w);
  check_all(b, 0);
  check_all(g, 1);
  check_all(be, 0);
  check_all(mm, 0);
  check_all(mv, 1);
  const double bound = std::sqrt(3.0 / 4.5);
  for (float x : w.to_vector<float>()) CHECK(std::abs(x) <= bound);
  CHECK(moments(w).var > 0);
  CHECK(Initializer::rule_for("q_max") == "one");
  CHECK_THROWS_WITH_AS((*init)("data", b), doctest::Contains("cannot initialize 'data'"),
                       InputError);
  CHECK_THROWS_WITH_AS((*init)("embed_weight", NDArray::zeros({7})),
                       doctest::Contains("needs at least 2 dimensions"), InputError);
  // Constant, zero and one fill weights.
  NDArray c(Shape{3, 3});
  (*make_initializer("constant", {{"value", "0.25"}}))("x_weight", c);
  check_all(c, 0.25f);
  (*make_initializer("ones", {}))("x_weight", c);
  check_all(c, 1.0f);
  (*make_initializer("Zero", {}))("x_weight", c);
  check_all(c, 0.0f);
  CHECK_THROWS_WITH_AS(make_initializer("xaviar", {}), doctest::Contains("did you mean 'xavier'"),
                       InputError);
  CHECK_THROWS_WITH_AS(make_initializer("xavier", {{"rnd_type", "normal"}}),
                       doctest::Contains("'rnd_type'"), InputError);
  CHECK_THROWS_AS(make_initializer("constant", {}), InputError);  // value is required
}

TEST_CASE("initializers: a seed makes values reproducible and per-name") {
  auto values = [](const std::string& init, uint64_t seed, const std::string& name) {
    NDArray a(Shape{64, 100});
    make_initializer(init, {}, seed)->init_weight(name, a);
    return a.to_vector<float>();
  };
  for (const char* init : {"xavier", "normal", "uniform", "msraprelu"}) {
    INFO(init);
    CHECK(values(init, 42, "fc_weight") == values(init, 42, "fc_weight"));
    CHECK(values(init, 42, "fc_weight") != values(init, 43, "fc_weight"));
    CHECK(values(init, 42, "fc_weight") != values(init, 42, "fc2_weight"));
  }
  // The values of an array do not depend on what was initialized before it.
  auto init = make_initializer("normal", {}, 5);
  NDArray first(Shape{10, 10}), other(Shape{3, 3}), again(Shape{10, 10});
  init->init_weight("a_weight", first);
  init->init_weight("b_weight", other);
  init->init_weight("a_weight", again);
  CHECK(first.to_vector<float>() == again.to_vector<float>());
}

TEST_CASE("initializers: pretrained weights are loaded with a report") {
  const test::TempDir scratch("optim_pretrained");
  const auto& dir = scratch.path();
  const std::string path = (dir / "model-0003.params").string();
  NamedArrays file;
  file.names = {"arg:fc1_weight", "arg:fc1_bias", "aux:bn_moving_mean", "arg:extra_weight",
                "conv_weight"};
  file.arrays = {NDArray::from_vector<double>({2, 3}, {1, 2, 3, 4, 5, 6}),  // converted to float32
                 NDArray::from_vector<float>({3}, {9, 9, 9}),               // shape differs
                 NDArray::from_vector<float>({4}, {0.5f, 0.25f, 0.125f, 1}),
                 NDArray::from_vector<float>({5}, {1, 1, 1, 1, 1}),  // not in the network
                 NDArray::from_vector<float>({1, 1}, {3})};          // name without prefix
  save_params(path, file);

  std::map<std::string, NDArray> targets = {{"fc1_weight", NDArray::zeros({2, 3})},
                                            {"fc1_bias", NDArray::full({2}, 7.0)},
                                            {"bn_moving_mean", NDArray::zeros({4})},
                                            {"conv_weight", NDArray::zeros({1, 1})},
                                            {"new_weight", NDArray::full({3}, 5.0)}};
  const PretrainedReport report = load_pretrained(path, targets);
  CHECK(report.loaded == std::vector<std::string>{"fc1_weight", "bn_moving_mean", "conv_weight"});
  REQUIRE(report.skipped.size() == 2);
  CHECK(report.skipped[0].name == "fc1_bias");
  CHECK(report.skipped[0].file_shape == Shape{3});
  CHECK(report.skipped[0].target_shape == Shape{2});
  CHECK(report.skipped[1].name == "extra_weight");
  CHECK(!report.skipped[1].target_shape.has_value());
  CHECK(report.left_initialized == std::vector<std::string>{"fc1_bias", "new_weight"});

  CHECK(targets["fc1_weight"].to_vector<float>() == std::vector<float>{1, 2, 3, 4, 5, 6});
  CHECK(targets["bn_moving_mean"].to_vector<float>() == std::vector<float>{0.5f, 0.25f, 0.125f, 1});
  CHECK(targets["conv_weight"].to_vector<float>() == std::vector<float>{3});
  CHECK(targets["fc1_bias"].to_vector<float>() == std::vector<float>{7, 7});
  CHECK(targets["new_weight"].to_vector<float>() == std::vector<float>{5, 5, 5});

  const std::string text = report.to_string();
  CHECK(text.find("3 loaded, 2 skipped, 2 left initialized") != std::string::npos);
  CHECK(text.find("skipped fc1_bias (3,): the network's shape is (2,)") != std::string::npos);
  CHECK(text.find("skipped extra_weight (5,): not in the network") != std::string::npos);
  CHECK(text.find("left initialized new_weight") != std::string::npos);

  NamedArrays unnamed;
  unnamed.arrays = {NDArray::zeros({2})};
  save_params((dir / "unnamed.params").string(), unnamed);
  CHECK_THROWS_WITH_AS(load_pretrained((dir / "unnamed.params").string(), targets),
                       doctest::Contains("have no names"), InputError);
  CHECK_THROWS_AS(load_pretrained((dir / "absent.params").string(), targets), InputError);
}

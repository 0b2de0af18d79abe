#include "op_harness.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "base/gpu.h"
#include "base/strings.h"
#include "compare.h"
#include "ndarray/params_io.h"
#include "op/dnnl/dnnl_switch.h"
#include "op/registry.h"
#include "op/resources.h"
#include "test_paths.h"

#ifndef MX_OP_HARNESS_GPU
#define MX_OP_HARNESS_GPU 0
#endif

namespace mx::test {
namespace {

std::vector<double> host_values(const NDArray& a) {
  std::vector<double> out;
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (const T& v : a.to_vector<T>()) {
      if constexpr (is_half_like_v<T>)
        out.push_back(static_cast<float>(v));
      else
        out.push_back(static_cast<double>(v));
    }
  });
  return out;
}

NDArray random_array(const Shape& shape, std::mt19937_64& rng, const GradientCheckOptions& o,
                     bool integer) {
  std::vector<double> values(static_cast<size_t>(shape.size()));
  std::uniform_real_distribution<double> uniform(o.low, o.high);
  for (auto& v : values) {
    if (integer) {
      v = static_cast<double>(rng() % static_cast<uint64_t>(o.integer_range));
      continue;
    }
    do {
      v = uniform(rng);
    } while (std::abs(v) < o.min_abs);
  }
  return NDArray::from_vector<double>(shape, values);
}

bool contains(const std::vector<int>& v, int x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// What a kernel finds in a buffer it must overwrite (req=write): NaN, so an
// element it forgets stays NaN and fails every comparison.
NDArray poisoned(const Shape& shape, DType dtype) {
  const bool floating = is_floating(dtype);
  return NDArray::full(shape, floating ? std::numeric_limits<double>::quiet_NaN() : 77.0,
                       Context::cpu(), dtype);
}

// What a buffer holds when the kernel must not touch it (req=null).
constexpr double kUntouched = 12345.0;

// `a` on `ctx` (itself when it is there already).
NDArray on(const NDArray& a, Context ctx) {
  if (a.is_none() || a.ctx() == ctx) return a;
  return a.copy_to(ctx);
}

std::vector<NDArray> on(const std::vector<NDArray>& arrays, Context ctx) {
  std::vector<NDArray> out;
  for (const auto& a : arrays) out.push_back(on(a, ctx));
  return out;
}

// Forward with every output poisoned and req=write, on `ctx` (where the
// inputs are; operators without inputs, such as _zeros, run there too).
std::vector<NDArray> forward_poisoned(const op::OpInstance& op, const std::vector<NDArray>& inputs,
                                      const std::vector<NDArray>& aux, bool is_train,
                                      Context ctx = Context::cpu()) {
  op::ShapeVector in_shapes, aux_shapes, out_shapes(op.output_names().size());
  op::DTypeVector in_types, aux_types, out_types(out_shapes.size());
  for (const auto& a : inputs) {
    in_shapes.push_back(a.shape());
    in_types.push_back(a.dtype());
  }
  for (const auto& a : aux) {
    aux_shapes.push_back(a.shape());
    aux_types.push_back(a.dtype());
  }
  op.infer_shape(in_shapes, aux_shapes, out_shapes);
  op.infer_type(in_types, aux_types, out_types);
  std::vector<NDArray> outputs;
  for (size_t i = 0; i < out_shapes.size(); ++i) {
    REQUIRE(out_shapes[i].is_known());
    REQUIRE(out_types[i].has_value());
    outputs.push_back(
        on(poisoned(out_shapes[i], *out_types[i]), inputs.empty() ? ctx : inputs[0].ctx()));
  }
  op::invoke_forward(op, inputs, aux, outputs,
                     std::vector<op::OpReq>(outputs.size(), op::OpReq::kWrite), is_train);
  return outputs;
}

// Whether the case's visible outputs change with the seed of the random
// resource: two forward passes on the CPU.
bool draws_random_numbers(const op::OpInstance& op, const std::vector<NDArray>& inputs,
                          const std::vector<NDArray>& aux, const GradientCheckOptions& o) {
  std::vector<std::vector<double>> first;
  for (const uint64_t seed : {o.seed, o.seed + 1}) {
    op::ResourceManager::get().seed(seed);
    std::vector<NDArray> aux_copy;
    for (const NDArray& a : aux) aux_copy.push_back(a.copy_to(Context::cpu()));
    const std::vector<NDArray> outputs = forward_poisoned(op, inputs, aux_copy, o.is_train);
    Engine::get().wait_all();
    for (int k = 0; k < op.num_visible_outputs(); ++k) {
      std::vector<double> values = host_values(outputs[static_cast<size_t>(k)]);
      if (seed == o.seed)
        first.push_back(std::move(values));
      else if (!std::equal(values.begin(), values.end(), first[static_cast<size_t>(k)].begin(),
                           first[static_cast<size_t>(k)].end(), [](double x, double y) {
                             return x == y || (std::isnan(x) && std::isnan(y));
                           }))
        return true;
    }
  }
  return false;
}

// The operators each test executable exercised, by registered name; written
// at exit to $MX_OP_COVERAGE_FILE for the coverage test (test_op_coverage).
class CoverageLog {
 public:
  static CoverageLog& get() {
    static CoverageLog log;
    return log;
  }
  void add(const char* kind, const std::string& op) { seen_.insert(std::string(kind) + " " + op); }
  ~CoverageLog() {
    const char* path = std::getenv("MX_OP_COVERAGE_FILE");
    if (path == nullptr || *path == 0) return;
    const std::string tmp = std::string(path) + ".tmp";
    {
      std::ofstream out(tmp, std::ios::trunc);
      for (const auto& line : seen_) out << line << "\n";
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
  }

 private:
  std::set<std::string> seen_;
};

}  // namespace

double closeness(const NDArray& a, const NDArray& b, double rtol, double atol) {
  return closeness(host_values(a), host_values(b), rtol, atol);
}

void check_gradient(const std::string& name, const op::AttrMap& attrs,
                    const std::vector<Shape>& input_shapes, const GradientCheckOptions& o) {
#if MX_OP_HARNESS_GPU
  // The GPU harness: the case on gpu:0 against the CPU, for operators with a GPU kernel.
  if (has_device_kernel(name, harness_device()))
    check_device(name, attrs, input_shapes, harness_device(), o);
  return;
#endif
  op::OpInstance op(name, attrs);
  CoverageLog::get().add("gradient", op.def().name);
  INFO("gradient check of ", name, " ",
       join(
           [&] {
             std::vector<std::string> parts;
             for (const auto& [k, v] : attrs) parts.push_back(k + "=" + v);
             return parts;
           }(),
           ", "));
  REQUIRE(input_shapes.size() == op.input_names().size());
  std::mt19937_64 rng(o.seed);
  std::vector<NDArray> inputs;
  for (size_t i = 0; i < input_shapes.size(); ++i)
    inputs.push_back(
        random_array(input_shapes[i], rng, o, contains(o.integer_inputs, static_cast<int>(i))));
  auto fresh_aux = [&] {
    std::vector<NDArray> aux;
    for (const auto& s : o.aux_shapes)
      aux.push_back(NDArray::full(s, o.aux_value, Context::cpu(), DType::kFloat64));
    return aux;
  };
  auto run_forward = [&] {
    op::ResourceManager::get().seed(o.seed);
    return forward_poisoned(op, inputs, fresh_aux(), o.is_train);
  };
  std::vector<NDArray> outputs = run_forward();
  const int visible = op.num_visible_outputs();
  std::vector<NDArray> weights;
  for (int k = 0; k < visible; ++k)
    weights.push_back(
        random_array(outputs[static_cast<size_t>(k)].shape(), rng, GradientCheckOptions{}, false));

  auto loss = [&](const std::vector<NDArray>& outs) {
    if (o.loss) {
      std::vector<std::vector<double>> ov, iv;
      for (const auto& a : outs) ov.push_back(host_values(a));
      for (const auto& a : inputs) iv.push_back(host_values(a));
      return o.loss(ov, iv);
    }
    double l = 0;
    for (int k = 0; k < visible; ++k) {
      auto y = host_values(outs[static_cast<size_t>(k)]);
      auto w = host_values(weights[static_cast<size_t>(k)]);
      for (size_t i = 0; i < y.size(); ++i) l += y[i] * w[i];
    }
    return l;
  };

  // Analytic gradients (req=write into NaN-filled buffers; unchecked inputs
  // get req=null and must keep what they hold).
  std::vector<op::OpReq> req;
  for (size_t i = 0; i < inputs.size(); ++i)
    req.push_back(contains(o.skip_inputs, static_cast<int>(i)) ? op::OpReq::kNull
                                                               : op::OpReq::kWrite);
  auto run_backward = [&](const std::vector<op::OpReq>& requests,
                          const std::vector<NDArray>& start) {
    std::vector<NDArray> g;
    for (size_t i = 0; i < inputs.size(); ++i) g.push_back(start[i].copy());
    op::ResourceManager::get().seed(o.seed);
    op::invoke_backward(op, weights, inputs, outputs, fresh_aux(), g, requests);
    Engine::get().wait_all();
    return g;
  };
  std::vector<NDArray> start;
  for (size_t i = 0; i < inputs.size(); ++i)
    start.push_back(req[i] == op::OpReq::kNull ? NDArray::full(inputs[i].shape(), kUntouched,
                                                               Context::cpu(), DType::kFloat64)
                                               : poisoned(inputs[i].shape(), DType::kFloat64));
  std::vector<NDArray> grads = run_backward(req, start);
  auto check_untouched = [&](const NDArray& g, size_t i, const char* pass) {
    INFO(pass, ": gradient of input '", op.input_names()[i], "' has req=null");
    for (double v : g.to_vector<double>()) REQUIRE(v == kUntouched);
  };
  for (size_t i = 0; i < inputs.size(); ++i)
    if (req[i] == op::OpReq::kNull) check_untouched(grads[i], i, "write pass");

  // req=add: the same gradient added to what the buffer holds.
  std::vector<op::OpReq> add_req = req;
  std::vector<NDArray> base = start;
  std::mt19937_64 base_rng(o.seed + 1);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (req[i] == op::OpReq::kNull) continue;
    add_req[i] = op::OpReq::kAdd;
    base[i] = random_array(inputs[i].shape(), base_rng, GradientCheckOptions{}, false);
  }
  std::vector<NDArray> added = run_backward(add_req, base);
  for (size_t i = 0; i < inputs.size(); ++i) {
    INFO("add pass: gradient of input '", op.input_names()[i], "'");
    if (req[i] == op::OpReq::kNull) {
      check_untouched(added[i], i, "add pass");
      continue;
    }
    auto b = base[i].to_vector<double>(), g = grads[i].to_vector<double>();
    for (size_t k = 0; k < b.size(); ++k) b[k] += g[k];
    CHECK(closeness(added[i].to_vector<double>(), b, 1e-9, 1e-12) <= 1.0);
  }

  // req=null on one checked input at a time: that buffer is untouched, the
  // others still get their gradient.
  for (size_t j = 0; j < inputs.size(); ++j) {
    if (req[j] == op::OpReq::kNull) continue;
    std::vector<op::OpReq> null_req = req;
    std::vector<NDArray> null_start = start;
    null_req[j] = op::OpReq::kNull;
    null_start[j] = NDArray::full(inputs[j].shape(), kUntouched, Context::cpu(), DType::kFloat64);
    std::vector<NDArray> partial = run_backward(null_req, null_start);
    check_untouched(partial[j], j, "null pass");
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (null_req[i] == op::OpReq::kNull) continue;
      INFO("null pass (input '", op.input_names()[j], "' not requested): gradient of input '",
           op.input_names()[i], "'");
      CHECK(closeness(partial[i], grads[i], 1e-9, 1e-12) <= 1.0);
    }
  }

  for (size_t i = 0; i < inputs.size(); ++i) {
    if (req[i] == op::OpReq::kNull) continue;
    auto analytic = grads[i].to_vector<double>();
    for (double g : analytic) REQUIRE(std::isfinite(g));
    const int64_t n = inputs[i].size();
    std::vector<int64_t> indices(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) indices[static_cast<size_t>(k)] = k;
    std::shuffle(indices.begin(), indices.end(), rng);
    if (static_cast<int64_t>(indices.size()) > o.max_checks_per_input)
      indices.resize(static_cast<size_t>(o.max_checks_per_input));
    for (int64_t k : indices) {
      Engine::get().wait_all();
      double* x = inputs[i].data<double>();
      const double saved = x[k];
      x[k] = saved + o.step;
      double plus = loss(run_forward());
      Engine::get().wait_all();
      x[k] = saved - o.step;
      double minus = loss(run_forward());
      Engine::get().wait_all();
      x[k] = saved;
      double numeric = (plus - minus) / (2 * o.step);
      double a = analytic[static_cast<size_t>(k)];
      double tolerance = o.atol + o.rtol * std::max(std::abs(numeric), std::abs(a));
      if (std::abs(numeric - a) > tolerance) {
        FAIL_CHECK("input '", op.input_names()[i], "' element ", k, ": analytic ", a, " numeric ",
                   numeric);
        return;
      }
    }
  }
  check_implementations(name, attrs, input_shapes, o);
}

void check_implementations(const std::string& name, const op::AttrMap& attrs,
                           const std::vector<Shape>& input_shapes, const GradientCheckOptions& o) {
  if (!op::dnnl_built() || MX_OP_HARNESS_GPU) return;
  op::OpInstance op(name, attrs);
  // Only operators that run in float32 with these parameters (not, e.g.,
  // an Embedding declared float64).
  op::DTypeVector in_types(input_shapes.size(), DType::kFloat32), aux_types, out_types;
  aux_types.assign(o.aux_shapes.size(), DType::kFloat32);
  out_types.resize(op.output_names().size());
  try {
    op.infer_type(in_types, aux_types, out_types);
  } catch (const std::exception&) {
    return;
  }
  for (const auto& t : out_types)
    if (t != DType::kFloat32) return;
  for (const auto& t : in_types)
    if (t != DType::kFloat32) return;
  INFO("oneDNN against the reference kernels: ", name);

  std::mt19937_64 rng(o.seed + 2);
  auto to_float = [](const NDArray& a) {
    auto v = a.to_vector<double>();
    return NDArray::from_vector<float>(a.shape(), std::vector<float>(v.begin(), v.end()));
  };
  std::vector<NDArray> inputs;
  for (size_t i = 0; i < input_shapes.size(); ++i)
    inputs.push_back(to_float(
        random_array(input_shapes[i], rng, o, contains(o.integer_inputs, static_cast<int>(i)))));
  std::vector<NDArray> add_base;
  for (const auto& s : input_shapes)
    add_base.push_back(to_float(random_array(s, rng, GradientCheckOptions{}, false)));
  std::vector<op::OpReq> req;
  for (size_t i = 0; i < inputs.size(); ++i)
    req.push_back(contains(o.skip_inputs, static_cast<int>(i)) ? op::OpReq::kNull
                                                               : op::OpReq::kWrite);

  struct Result {
    std::vector<NDArray> outputs, aux, grads, added;
  };
  std::vector<NDArray> out_grads;
  auto run = [&](bool dnnl) {
    op::ScopedDnnl use(dnnl);
    Result r;
    for (const auto& s : o.aux_shapes) r.aux.push_back(NDArray::full(s, o.aux_value));
    op::ResourceManager::get().seed(o.seed);
    r.outputs = forward_poisoned(op, inputs, r.aux, o.is_train);
    if (out_grads.empty())
      for (int k = 0; k < op.num_visible_outputs(); ++k)
        out_grads.push_back(to_float(random_array(r.outputs[static_cast<size_t>(k)].shape(), rng,
                                                  GradientCheckOptions{}, false)));
    auto backward = [&](op::OpReq kind, const std::vector<NDArray>& start) {
      std::vector<NDArray> g;
      std::vector<op::OpReq> requests = req;
      for (size_t i = 0; i < inputs.size(); ++i) {
        g.push_back(start[i].copy());
        if (requests[i] != op::OpReq::kNull) requests[i] = kind;
      }
      std::vector<NDArray> aux;
      for (const auto& s : o.aux_shapes) aux.push_back(NDArray::full(s, o.aux_value));
      op::ResourceManager::get().seed(o.seed);
      op::invoke_backward(op, out_grads, inputs, r.outputs, aux, g, requests);
      Engine::get().wait_all();
      return g;
    };
    if (op.def().has_backward()) {
      std::vector<NDArray> nan;
      for (const auto& s : input_shapes) nan.push_back(poisoned(s, DType::kFloat32));
      r.grads = backward(op::OpReq::kWrite, nan);
      r.added = backward(op::OpReq::kAdd, add_base);
    }
    Engine::get().wait_all();
    return r;
  };
  const Result reference = run(false);
  const Result dnnl = run(true);
  const double rtol = 1e-4, atol = 1e-4;
  for (int k = 0; k < op.num_visible_outputs(); ++k) {
    INFO("output ", k);
    const auto i = static_cast<size_t>(k);
    CHECK(closeness(dnnl.outputs[i], reference.outputs[i], rtol, atol) <= 1.0);
  }
  for (size_t k = 0; k < reference.aux.size(); ++k) {
    INFO("auxiliary state ", k, " after the forward pass");
    CHECK(closeness(dnnl.aux[k], reference.aux[k], rtol, atol) <= 1.0);
  }
  for (size_t i = 0; i < reference.grads.size(); ++i) {
    if (req[i] == op::OpReq::kNull) continue;
    INFO("gradient of input '", op.input_names()[i], "' (req write, then add)");
    CHECK(closeness(dnnl.grads[i], reference.grads[i], rtol, atol) <= 1.0);
    CHECK(closeness(dnnl.added[i], reference.added[i], rtol, atol) <= 1.0);
  }
}

std::vector<ReferenceCase> load_reference_cases(const std::string& family) {
  const std::string base = fixtures_dir() + "/ops/" + family;
  NamedArrays arrays = load_params(base + ".params");
  std::map<std::string, NDArray> by_name;
  for (size_t i = 0; i < arrays.names.size(); ++i) by_name[arrays.names[i]] = arrays.arrays[i];
  std::ifstream in(base + ".cases");
  REQUIRE_MESSAGE(in.good(), "missing ", base, ".cases");
  std::vector<ReferenceCase> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto fields = split(line, '\t');
    REQUIRE(fields.size() >= 3);
    ReferenceCase c;
    c.id = fields[0];
    c.op = fields[1];
    c.is_train = fields[2] == "1";
    for (size_t f = 3; f < fields.size(); ++f) {
      auto eq = fields[f].find('=');
      REQUIRE(eq != std::string::npos);
      c.attrs[fields[f].substr(0, eq)] = fields[f].substr(eq + 1);
    }
    auto collect = [&](const std::string& kind) {
      std::vector<NDArray> list;
      for (int k = 0;; ++k) {
        auto it = by_name.find(c.id + ":" + kind + std::to_string(k));
        if (it == by_name.end()) break;
        list.push_back(it->second);
      }
      return list;
    };
    c.inputs = collect("in");
    c.aux = collect("aux");
    c.outputs = collect("out");
    c.out_grads = collect("ograd");
    c.aux_after = collect("auxafter");
    // Gradients may be missing for inputs that have none (labels): keep positions.
    for (size_t k = 0; k < c.inputs.size(); ++k) {
      auto it = by_name.find(c.id + ":igrad" + std::to_string(k));
      c.in_grads.push_back(it == by_name.end() ? NDArray() : it->second);
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

namespace {

void check_reference_once(const ReferenceCase& c, Context ctx, double rtol, double atol) {
  op::OpInstance op(c.op, c.attrs);
  CoverageLog::get().add(ctx.is_gpu() ? "gpu-reference" : "reference", op.def().name);
  const std::vector<NDArray> inputs = on(c.inputs, ctx);
  std::vector<NDArray> aux;
  for (const auto& a : c.aux) aux.push_back(a.copy_to(ctx));
  op::ResourceManager::get().seed(0);
  std::vector<NDArray> outputs = forward_poisoned(op, inputs, aux, c.is_train, ctx);
  const size_t visible = static_cast<size_t>(op.num_visible_outputs());
  REQUIRE(c.outputs.size() <= outputs.size());
  for (size_t k = 0; k < std::min(visible, c.outputs.size()); ++k) {
    INFO("output ", k);
    CHECK(outputs[k].shape() == c.outputs[k].shape());
    CHECK(closeness(outputs[k], c.outputs[k], rtol, atol) <= 1.0);
  }
  for (size_t k = 0; k < c.aux_after.size(); ++k) {
    INFO("auxiliary state ", k, " after the forward pass");
    CHECK(closeness(aux[k], c.aux_after[k], rtol, atol) <= 1.0);
  }
  bool any_grad = false;
  for (const auto& g : c.in_grads) any_grad = any_grad || !g.is_none();
  if (!any_grad) return;
  std::vector<NDArray> grads;
  std::vector<op::OpReq> req;
  for (size_t k = 0; k < c.inputs.size(); ++k) {
    grads.push_back(on(poisoned(c.inputs[k].shape(), c.inputs[k].dtype()), ctx));
    req.push_back(c.in_grads[k].is_none() ? op::OpReq::kNull : op::OpReq::kWrite);
  }
  op::invoke_backward(op, on(c.out_grads, ctx), inputs, outputs, aux, grads, req);
  for (size_t k = 0; k < grads.size(); ++k) {
    if (c.in_grads[k].is_none()) continue;
    INFO("gradient of input ", k, " (", op.input_names()[k], ")");
    CHECK(closeness(grads[k], c.in_grads[k], rtol, atol) <= 1.0);
  }
}

std::string describe(const op::AttrMap& attrs) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : attrs) parts.push_back(k + "=" + v);
  return join(parts, ", ");
}

// `a`'s values as `dtype` (on the CPU).
NDArray with_dtype(const NDArray& a, DType dtype) {
  const std::vector<double> values = host_values(a);
  return dispatch_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<T> converted;
    converted.reserve(values.size());
    for (double v : values) {
      if constexpr (std::is_same_v<T, half_t>)
        converted.push_back(T(static_cast<float>(v)));
      else
        converted.push_back(static_cast<T>(v));
    }
    return NDArray::from_vector<T>(a.shape(), std::move(converted));
  });
}

}  // namespace

void check_reference_on(const ReferenceCase& c, Context device, double rtol, double atol) {
  INFO("reference case ", c.id, " (", c.op, ") on ", device.to_string());
  check_reference_once(c, device, rtol, atol);
}

Context harness_device() {
  const char* env = std::getenv("MX_HARNESS_DEVICE");
  return env != nullptr && *env != 0 ? Context::parse(env) : Context::gpu(0);
}

bool gpu_present() { return gpu::compiled_with_cuda() && gpu::device_count() > 0; }

bool has_device_kernel(const std::string& op, Context device) {
  return op::OpRegistry::get().find(op).has_kernel(device.is_gpu() ? DeviceKind::kGPU
                                                                   : DeviceKind::kCPU);
}

void check_device(const std::string& name, const op::AttrMap& attrs,
                  const std::vector<Shape>& input_shapes, Context device,
                  const GradientCheckOptions& o) {
  op::OpInstance op(name, attrs);
  CoverageLog::get().add(device.is_gpu() ? "gpu-gradient" : "device-gradient", op.def().name);
  INFO(device.to_string(), " against the CPU: ", name, " ", describe(attrs));
  REQUIRE(input_shapes.size() == op.input_names().size());
  // float32 inputs where the operator takes them; the outputs in the dtypes
  // it gives (Cast, argmax, one_hot may give others).
  op::DTypeVector in_types, aux_types, out_types;
  // float32, or float64 where the operator declares it (Embedding dtype=float64).
  auto infer = [&](DType dtype) {
    in_types.assign(input_shapes.size(), dtype);
    aux_types.assign(o.aux_shapes.size(), dtype);
    out_types.assign(op.output_names().size(), std::nullopt);
    try {
      op.infer_type(in_types, aux_types, out_types);
      return true;
    } catch (const std::exception&) {
      return false;
    }
  };
  if (!infer(DType::kFloat32) && !infer(DType::kFloat64)) {
    FAIL_CHECK("the case runs in neither float32 nor float64");
    return;
  }
  std::mt19937_64 rng(o.seed + 3);
  std::vector<NDArray> inputs, add_base;
  for (size_t i = 0; i < input_shapes.size(); ++i)
    inputs.push_back(with_dtype(
        random_array(input_shapes[i], rng, o, contains(o.integer_inputs, static_cast<int>(i))),
        *in_types[i]));
  for (size_t i = 0; i < input_shapes.size(); ++i)
    add_base.push_back(with_dtype(random_array(input_shapes[i], rng, GradientCheckOptions{}, false),
                                  *in_types[i]));
  auto fresh_aux = [&](Context ctx) {
    std::vector<NDArray> aux;
    for (size_t k = 0; k < o.aux_shapes.size(); ++k)
      aux.push_back(
          on(NDArray::full(o.aux_shapes[k], o.aux_value, Context::cpu(), *aux_types[k]), ctx));
    return aux;
  };
  std::vector<op::OpReq> req;
  for (size_t i = 0; i < inputs.size(); ++i)
    req.push_back(contains(o.skip_inputs, static_cast<int>(i)) ? op::OpReq::kNull
                                                               : op::OpReq::kWrite);
  // Random operators (Dropout; mode=always draws at inference too) draw
  // differently on each device: their outputs are not compared, and both
  // backward passes get the device's forward outputs (its mask). An operator
  // that takes the random resource but draws nothing in this case (RNN
  // without dropout between layers) is compared as any other, outputs too,
  // each device's backward pass on its own saved values.
  const bool random = std::find(op.def().resources.begin(), op.def().resources.end(),
                                op::ResourceKind::kRandom) != op.def().resources.end() &&
                      draws_random_numbers(op, inputs, fresh_aux(Context::cpu()), o);

  struct Result {
    std::vector<NDArray> outputs, aux, grads, added;
  };
  const Context cpu = Context::cpu();
  std::vector<NDArray> out_grads;
  auto backward = [&](Context ctx, const std::vector<NDArray>& outputs, op::OpReq kind,
                      const std::vector<NDArray>& start) {
    std::vector<NDArray> g;
    std::vector<op::OpReq> requests = req;
    for (size_t i = 0; i < inputs.size(); ++i) {
      g.push_back(requests[i] == op::OpReq::kNull
                      ? on(NDArray::full(input_shapes[i], kUntouched, cpu, *in_types[i]), ctx)
                      : start[i].copy_to(ctx));
      if (requests[i] != op::OpReq::kNull) requests[i] = kind;
    }
    op::ResourceManager::get().seed(o.seed);
    op::invoke_backward(op, on(out_grads, ctx), on(inputs, ctx), on(outputs, ctx), fresh_aux(ctx),
                        g, requests);
    Engine::get().wait_all();
    return g;
  };
  auto run = [&](Context ctx, const std::vector<NDArray>* forward_outputs) {
    Result r;
    r.aux = fresh_aux(ctx);
    op::ResourceManager::get().seed(o.seed);
    r.outputs = forward_poisoned(op, on(inputs, ctx), r.aux, o.is_train, ctx);
    Engine::get().wait_all();
    if (out_grads.empty())
      for (int k = 0; k < op.num_visible_outputs(); ++k) {
        const NDArray& y = r.outputs[static_cast<size_t>(k)];
        out_grads.push_back(
            with_dtype(random_array(y.shape(), rng, GradientCheckOptions{}, false), y.dtype()));
      }
    if (!op.def().has_backward()) return r;
    const std::vector<NDArray>& outputs = forward_outputs ? *forward_outputs : r.outputs;
    std::vector<NDArray> nan;
    for (size_t i = 0; i < inputs.size(); ++i)
      nan.push_back(poisoned(input_shapes[i], *in_types[i]));
    r.grads = backward(ctx, outputs, op::OpReq::kWrite, nan);
    r.added = backward(ctx, outputs, op::OpReq::kAdd, add_base);
    return r;
  };
  const Result on_device = run(device, nullptr);
  const Result reference = run(cpu, random ? &on_device.outputs : nullptr);
  // The options may only widen the tolerances (long recurrences).
  const double rtol = std::max(o.rtol, 1e-4), atol = std::max(o.atol, 1e-4);
  if (random) {
    MESSAGE(name, " draws random numbers: its ", device.to_string(),
            " outputs are not compared with the CPU's; its gradients are, from the same mask");
  } else {
    for (size_t k = 0; k < static_cast<size_t>(op.num_visible_outputs()); ++k) {
      INFO("output ", k);
      CHECK(on_device.outputs[k].shape() == reference.outputs[k].shape());
      CHECK(on_device.outputs[k].dtype() == reference.outputs[k].dtype());
      CHECK(closeness(on_device.outputs[k], reference.outputs[k], rtol, atol) <= 1.0);
    }
    for (size_t k = 0; k < reference.aux.size(); ++k) {
      INFO("auxiliary state ", k, " after the forward pass");
      CHECK(closeness(on_device.aux[k], reference.aux[k], rtol, atol) <= 1.0);
    }
  }
  for (size_t i = 0; i < reference.grads.size(); ++i) {
    INFO("gradient of input '", op.input_names()[i], "'");
    if (req[i] == op::OpReq::kNull) {
      // req=null: the device's buffer keeps what it held, in both passes.
      for (const auto* pass : {&on_device.grads, &on_device.added})
        for (double v : host_values((*pass)[i])) REQUIRE(v == kUntouched);
      continue;
    }
    INFO("req write (into NaN), then add (onto random values)");
    CHECK(closeness(on_device.grads[i], reference.grads[i], rtol, atol) <= 1.0);
    CHECK(closeness(on_device.added[i], reference.added[i], rtol, atol) <= 1.0);
  }
}

void check_reference(const ReferenceCase& c, double rtol, double atol) {
#if MX_OP_HARNESS_GPU
  // The GPU harness: the fixtures on gpu:0 for operators with a GPU kernel.
  if (has_device_kernel(c.op, harness_device()))
    check_reference_on(c, harness_device(), rtol, atol);
  return;
#endif
  INFO("reference case ", c.id, " (", c.op, ")");
  for (bool dnnl : {true, false}) {
    if (dnnl && !op::dnnl_built()) continue;
    const std::string kernels = dnnl ? "oneDNN kernels" : "reference kernels";
    INFO(kernels);
    op::ScopedDnnl use(dnnl);
    check_reference_once(c, Context::cpu(), rtol, atol);
  }
}

}  // namespace mx::test

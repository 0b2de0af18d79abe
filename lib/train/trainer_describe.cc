#include "train/trainer_describe.h"

#include <algorithm>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <sstream>

#include "base/strings.h"
#include "executor/executor.h"
#include "graph/indexed_graph.h"
#include "graph/infer.h"

namespace mx::train {
namespace {

struct LayerRow {
  std::string name, op, output_shape;
  int64_t params = 0;
  double flops = 0;  // forward multiply-adds counted as 2
};

std::vector<LayerRow> layer_rows(const graph::Symbol& symbol, const graph::ShapeMap& shapes,
                                 const std::set<std::string>& inputs, int64_t& total_params) {
  graph::IndexedGraph g(symbol.outputs());
  std::vector<Shape> entry(g.num_entries());
  for (uint32_t v : g.variables()) {
    auto it = shapes.find(g.node(v).name);
    if (it != shapes.end()) entry[g.entry_id(v, 0)] = it->second;
  }
  entry = graph::infer_entry_shapes(g, entry);
  std::vector<LayerRow> rows;
  total_params = 0;
  for (uint32_t v : g.variables())
    if (!inputs.count(g.node(v).name) && entry[g.entry_id(v, 0)].is_known() &&
        !g.is_aux_variable(v))
      total_params += entry[g.entry_id(v, 0)].size();
  for (uint32_t id = 0; id < g.num_nodes(); ++id) {
    const graph::Node& n = g.node(id);
    if (n.is_variable()) continue;
    LayerRow row;
    row.name = n.name;
    row.op = n.op->def().name;
    std::vector<Shape> in, out;
    for (const auto& e : n.inputs) {
      in.push_back(entry[g.entry_id(e)]);
      if (e.node->is_variable() && !inputs.count(e.node->name) && entry[g.entry_id(e)].is_known())
        row.params += entry[g.entry_id(e)].size();
    }
    for (uint32_t k = 0; k < n.num_outputs(); ++k) out.push_back(entry[g.entry_id(id, k)]);
    row.output_shape = out[0].to_string();
    row.flops = n.op->def().forward_flops(n.op->params(), in, out);
    rows.push_back(row);
  }
  return rows;
}

std::string human(double v) {
  const char* units[] = {"", "K", "M", "G", "T"};
  int u = 0;
  while (v >= 1000 && u < 4) {
    v /= 1000;
    ++u;
  }
  std::ostringstream out;
  out << std::fixed << std::setprecision(u == 0 ? 0 : 2) << v << units[u];
  return out.str();
}

}  // namespace

void describe_network(std::ostream& out, bool json, const DescribeInput& d) {
  int64_t total_params = 0;
  auto rows = layer_rows(*d.symbol, d.shapes, d.inputs, total_params);
  double total_flops = 0;
  for (const auto& r : rows) total_flops += r.flops;
  BindOptions train = d.bind, infer = d.bind;
  train.for_training = true;
  infer.for_training = false;
  auto train_mem = Executor::plan_only(*d.symbol, d.shapes, train);
  auto infer_mem = Executor::plan_only(*d.symbol, d.shapes, infer);
  BindOptions naive = train;
  naive.memory.inplace = naive.memory.coshare = false;
  auto naive_mem = Executor::plan_only(*d.symbol, d.shapes, naive);
  if (json) {
    nlohmann::json j;
    for (const auto& r : rows)
      j["layers"].push_back({{"name", r.name},
                             {"op", r.op},
                             {"output_shape", r.output_shape},
                             {"params", r.params},
                             {"flops", r.flops}});
    j["total_params"] = total_params;
    j["forward_flops"] = total_flops;
    j["memory"] = {{"training_internal_bytes", train_mem.planned_internal_bytes},
                   {"training_naive_bytes", naive_mem.planned_internal_bytes},
                   {"inference_internal_bytes", infer_mem.planned_internal_bytes},
                   {"parameter_bytes", train_mem.argument_bytes},
                   {"gradient_bytes", train_mem.gradient_bytes}};
    out << j.dump(2) << "\n";
    return;
  }
  out << std::left << std::setw(28) << "layer" << std::setw(18) << "op" << std::setw(22)
      << "output shape" << std::right << std::setw(12) << "params" << std::setw(12) << "FLOPs"
      << "\n";
  for (const auto& r : rows)
    out << std::left << std::setw(28) << r.name << std::setw(18) << r.op << std::setw(22)
        << r.output_shape << std::right << std::setw(12) << r.params << std::setw(12)
        << human(r.flops) << "\n";
  out << "total parameters: " << total_params << " ("
      << format_bytes(static_cast<double>(total_params) * 4)
      << " as float32)\nforward FLOPs per batch: " << human(total_flops) << "\n";
  out << "internal memory (activations, gradients; planned with in-place and co-share):\n"
      << "  training:  " << format_bytes(static_cast<double>(train_mem.planned_internal_bytes))
      << " (naive " << format_bytes(static_cast<double>(naive_mem.planned_internal_bytes)) << ")\n"
      << "  inference: " << format_bytes(static_cast<double>(infer_mem.planned_internal_bytes))
      << "\n"
      << "parameters + auxiliary states: "
      << format_bytes(static_cast<double>(train_mem.argument_bytes))
      << "; their gradients: " << format_bytes(static_cast<double>(train_mem.gradient_bytes))
      << "\n";
}

void benchmark_network(std::ostream& out, int iterations, const DescribeInput& d) {
  BindOptions bind = d.bind;
  bind.for_training = true;
  auto exe = Executor::simple_bind(*d.symbol, d.shapes, bind);
  exe->profile(1);  // warm up: temp space, caches
  auto times = exe->profile(iterations);
  std::map<std::string, std::pair<double, double>> per_layer;  // forward, backward ms
  std::vector<std::string> order;
  double forward = 0, backward = 0;
  for (const auto& t : times) {
    if (!per_layer.count(t.node)) order.push_back(t.node);
    (t.backward ? per_layer[t.node].second : per_layer[t.node].first) += t.ms;
    (t.backward ? backward : forward) += t.ms;
  }
  out << std::left << std::setw(28) << "layer" << std::right << std::setw(14) << "forward ms"
      << std::setw(14) << "backward ms"
      << "\n";
  out << std::fixed << std::setprecision(3);
  for (const auto& name : order)
    out << std::left << std::setw(28) << name << std::right << std::setw(14)
        << per_layer[name].first << std::setw(14) << per_layer[name].second << "\n";
  const int64_t batch = d.shapes.begin()->second[0];
  out << std::left << std::setw(28) << "total" << std::right << std::setw(14) << forward
      << std::setw(14) << backward << "\n";
  // The same times by operator, costliest first.
  std::map<std::string, double> per_op;
  for (const auto& t : times) per_op[t.op] += t.ms;
  std::vector<std::pair<std::string, double>> ops(per_op.begin(), per_op.end());
  std::sort(ops.begin(), ops.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });
  out << "by operator (forward + backward ms):\n";
  for (const auto& [op, ms] : ops)
    out << "  " << std::left << std::setw(26) << op << std::right << std::setw(10) << ms << "\n";
  out << "forward + backward: " << forward + backward << " ms per batch of " << batch << " ("
      << std::setprecision(1) << batch * 1000.0 / (forward + backward) << " samples/s, mean of "
      << iterations << " iterations, one step at a time"
      << (bind.ctx.is_gpu() ? "; GPU time of each step's kernels" : "") << ")\n";
}

}  // namespace mx::train

#include "graph/plan_memory.h"

#include <algorithm>
#include <functional>
#include <map>

#include "op/registry.h"

namespace mx::graph {
namespace {

constexpr size_t kMatchRange = 16;  // a block is reused for sizes within a factor of 16

class BlockPool {
 public:
  explicit BlockPool(std::vector<size_t>& sizes) : sizes_(sizes) {}

  size_t take(size_t bytes, bool coshare) {
    if (coshare && !free_.empty()) {
      // The smallest free block that is large enough and not wastefully large...
      auto it = free_.lower_bound(bytes);
      if (it != free_.end() && it->first <= bytes * kMatchRange) return pop(it);
      // ...else the largest smaller one, grown to fit.
      if (it != free_.begin()) {
        --it;
        if (it->first * kMatchRange >= bytes) {
          size_t id = pop(it);
          sizes_[id] = bytes;
          return id;
        }
      }
    }
    sizes_.push_back(bytes);
    return sizes_.size() - 1;
  }
  void give_back(size_t id) { free_.emplace(sizes_[id], id); }

 private:
  size_t pop(std::multimap<size_t, size_t>::iterator it) {
    size_t id = it->second;
    free_.erase(it);
    return id;
  }
  std::vector<size_t>& sizes_;
  std::multimap<size_t, size_t> free_;
};

bool internal(const ExecPlan& plan, int64_t e) {
  return e >= 0 && plan.entries[static_cast<size_t>(e)].role == EntryRole::kInternal;
}

}  // namespace

size_t MemoryPlan::total_bytes() const {
  size_t total = 0;
  for (size_t b : block_bytes) total += b;
  return total;
}

std::vector<const Step*> execution_order(const ExecPlan& plan) {
  std::vector<const Step*> order;
  for (const auto& s : plan.forward) order.push_back(&s);
  for (const auto& s : plan.backward) order.push_back(&s);
  return order;
}

MemoryPlan plan_memory(ExecPlan& plan, const IndexedGraph& g, const MemoryPlanOptions& options) {
  std::vector<Step*> order;
  for (auto& s : plan.forward) order.push_back(&s);
  for (auto& s : plan.backward) order.push_back(&s);

  const size_t num_entries = plan.entries.size();
  std::vector<int> readers(num_entries, 0);
  for (const Step* s : order)
    for (size_t k = 0; k < s->inputs.size(); ++k)
      if (s->reads[k] && s->inputs[k] >= 0) ++readers[static_cast<size_t>(s->inputs[k])];
  // Outputs of the executor stay alive after the last step.
  for (int64_t e : plan.outputs) ++readers[static_cast<size_t>(e)];
  // Steps that write each entry: a gradient added onto an array by several
  // backward steps (exec_plan.cc) lives from its first writer on.
  std::vector<int> writers(num_entries, 0);
  for (const Step* s : order)
    for (int64_t e : s->outputs)
      if (e >= 0) ++writers[static_cast<size_t>(e)];

  MemoryPlan mp;
  mp.storage_of.assign(num_entries, -1);
  BlockPool pool(mp.block_bytes);
  std::vector<int> block_users;  // live entries per block

  auto assign_block = [&](int64_t e, size_t block) {
    mp.storage_of[static_cast<size_t>(e)] = static_cast<int64_t>(block);
    if (block_users.size() <= block) block_users.resize(block + 1, 0);
    ++block_users[block];
  };
  auto release = [&](int64_t e) {
    const int64_t block = mp.storage_of[static_cast<size_t>(e)];
    if (block < 0) return;
    if (--block_users[static_cast<size_t>(block)] == 0) pool.give_back(static_cast<size_t>(block));
  };

  for (size_t si = 0; si < order.size(); ++si) {
    Step& s = *order[si];
    // In-place pairs: (input slot, output slot).
    std::vector<std::pair<int, int>> pairs;
    if (s.kind == StepKind::kForward || s.kind == StepKind::kRecompute)
      pairs = g.node(s.node).op->def().inplace;
    else if (s.kind == StepKind::kSum)
      pairs = {{0, 0}};
    else if (s.kind == StepKind::kBackward && g.node(s.node).op->def().backward_inplace)
      pairs = {{0, 0}};  // the gradient of input 0 over the gradient of output 0
    std::vector<bool> output_done(s.outputs.size(), false);
    if (options.inplace) {
      for (auto [in, out] : pairs) {
        if (static_cast<size_t>(in) >= s.inputs.size() ||
            static_cast<size_t>(out) >= s.outputs.size())
          continue;
        const int64_t ie = s.inputs[static_cast<size_t>(in)],
                      oe = s.outputs[static_cast<size_t>(out)];
        if (!internal(plan, ie) || !internal(plan, oe) || output_done[static_cast<size_t>(out)])
          continue;
        // An output an earlier step wrote is added onto, where it is.
        if (mp.storage_of[static_cast<size_t>(oe)] >= 0) continue;
        if (mp.storage_of[static_cast<size_t>(ie)] < 0) continue;
        // This step must be the input's last reader, and read it only once.
        int uses_here = 0;
        for (size_t k = 0; k < s.inputs.size(); ++k)
          uses_here += s.inputs[k] == ie && s.reads[k] ? 1 : 0;
        if (readers[static_cast<size_t>(ie)] != uses_here || uses_here != 1) continue;
        if (plan.entries[static_cast<size_t>(ie)].bytes() !=
            plan.entries[static_cast<size_t>(oe)].bytes())
          continue;
        assign_block(oe, static_cast<size_t>(mp.storage_of[static_cast<size_t>(ie)]));
        s.req[static_cast<size_t>(out)] = op::OpReq::kInplace;
        output_done[static_cast<size_t>(out)] = true;
        mp.inplace_outputs.emplace_back(si, static_cast<size_t>(out));
      }
    }
    for (size_t k = 0; k < s.outputs.size(); ++k) {
      const int64_t oe = s.outputs[k];
      if (!internal(plan, oe) || output_done[k] || mp.storage_of[static_cast<size_t>(oe)] >= 0)
        continue;
      assign_block(oe, pool.take(plan.entries[static_cast<size_t>(oe)].bytes(), options.coshare));
    }
    // Inputs read for the last time die here; so do outputs nobody reads.
    for (size_t k = 0; k < s.inputs.size(); ++k) {
      const int64_t ie = s.inputs[k];
      if (!s.reads[k] || !internal(plan, ie)) continue;
      if (--readers[static_cast<size_t>(ie)] == 0) release(ie);
    }
    for (size_t k = 0; k < s.outputs.size(); ++k) {
      const int64_t oe = s.outputs[k];
      if (oe < 0) continue;
      if (--writers[static_cast<size_t>(oe)] == 0 && internal(plan, oe) &&
          readers[static_cast<size_t>(oe)] == 0)
        release(oe);
    }
  }
  return mp;
}

std::vector<bool> mirror_nodes(const IndexedGraph& g, MirrorPolicy policy) {
  std::vector<bool> mirrored(g.num_nodes(), false);
  for (uint32_t id = 0; id < g.num_nodes(); ++id) {
    const Node& n = g.node(id);
    if (n.is_variable()) continue;
    const op::OpDef& def = n.op->def();
    const bool random = std::find(def.resources.begin(), def.resources.end(),
                                  op::ResourceKind::kRandom) != def.resources.end();
    if (!n.op->aux_names().empty() || random || def.is_loss) continue;  // cannot recompute safely
    bool want = policy == MirrorPolicy::kAll || (policy == MirrorPolicy::kCheap && !def.expensive);
    auto it = n.attrs.find("__mirror__");
    if (it != n.attrs.end())
      want = it->second == "True" || it->second == "true" || it->second == "1";
    mirrored[id] = want;
  }
  return mirrored;
}

size_t apply_mirroring(ExecPlan& plan, const IndexedGraph& g, const std::vector<bool>& mirrored) {
  const size_t forward_entries = g.num_entries();
  // entry id -> node that produced it (forward entries only)
  std::vector<int64_t> producer(forward_entries, -1);
  for (uint32_t id = 0; id < g.num_nodes(); ++id)
    for (uint32_t k = 0; k < g.node(id).num_outputs(); ++k) producer[g.entry_id(id, k)] = id;
  std::vector<int64_t> copy_of(forward_entries, -1);  // forward entry -> recomputed entry
  std::vector<Step> rewritten;
  size_t added = 0;

  // Recompute node `id` (and, first, the mirrored nodes it reads), appending
  // the steps to `rewritten`.
  std::function<void(uint32_t)> recompute = [&](uint32_t id) {
    const Node& n = g.node(id);
    Step s;
    s.kind = StepKind::kRecompute;
    s.node = id;
    for (const auto& in : n.inputs) {
      int64_t e = g.entry_id(in);
      int64_t p = producer[static_cast<size_t>(e)];
      if (p >= 0 && mirrored[static_cast<size_t>(p)]) {
        if (copy_of[static_cast<size_t>(e)] < 0) recompute(static_cast<uint32_t>(p));
        e = copy_of[static_cast<size_t>(e)];
      }
      s.inputs.push_back(e);
      s.reads.push_back(true);
    }
    for (uint32_t k = 0; k < n.num_outputs(); ++k) {
      const int64_t original = g.entry_id(id, k);
      PlanEntry copy = plan.entries[static_cast<size_t>(original)];
      copy.name += "_mirror";
      plan.entries.push_back(copy);
      const int64_t c = static_cast<int64_t>(plan.entries.size()) - 1;
      copy_of[static_cast<size_t>(original)] = c;
      s.outputs.push_back(c);
      s.req.push_back(op::OpReq::kWrite);
    }
    rewritten.push_back(s);
    ++added;
  };

  for (Step s : plan.backward) {
    for (size_t k = 0; k < s.inputs.size(); ++k) {
      const int64_t e = s.inputs[k];
      if (!s.reads[k] || e < 0 || static_cast<size_t>(e) >= forward_entries) continue;
      const int64_t p = producer[static_cast<size_t>(e)];
      if (p < 0 || !mirrored[static_cast<size_t>(p)] ||
          g.node(static_cast<uint32_t>(p)).is_variable())
        continue;
      if (copy_of[static_cast<size_t>(e)] < 0) recompute(static_cast<uint32_t>(p));
      s.inputs[k] = copy_of[static_cast<size_t>(e)];
    }
    rewritten.push_back(s);
  }
  plan.backward = std::move(rewritten);
  return added;
}

}  // namespace mx::graph

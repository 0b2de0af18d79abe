#include "op/dnnl/dnnl_context.h"

#include <omp.h>

#include <algorithm>

#include "base/parallel.h"
#include "base/runtime_config.h"
#include "base/threads.h"
#include "engine/var.h"
#include "op/dnnl/dnnl_switch.h"

namespace mx::op::dnnl_impl {
namespace {

constexpr size_t kAlign = 64;

size_t aligned(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

// Scratch for kernels of operators without a TempSpace; one per thread.
void* thread_scratch(size_t bytes) {
  thread_local std::vector<std::byte> buffer;
  if (buffer.size() < bytes + kAlign) buffer.resize(bytes + kAlign);
  auto address = reinterpret_cast<uintptr_t>(buffer.data());
  return buffer.data() + (aligned(address) - address);
}

// Inputs reordered once per content (ContentStamp): per variable uid, the
// latest layout it was reordered to, with the version it holds. Bounded in bytes:
// entries of arrays that are gone are never hit again (uids are unique), so
// the whole cache starts over when the bound is passed.
class ReorderedInputs {
 public:
  static ReorderedInputs& get() {
    static auto* cache = new ReorderedInputs;  // never destroyed: kernels may run at exit
    return *cache;
  }

  // The buffer holding `user` (at `data`, content `stamp`) in layout `want`.
  std::shared_ptr<const std::vector<std::byte>> find_or_make(const ContentStamp& stamp,
                                                             const dnnl::memory::desc& want,
                                                             const dnnl::reorder& to_want,
                                                             dnnl::memory& user,
                                                             dnnl::stream& stream) {
    {
      std::lock_guard lock(mutex_);
      auto found = entries_.find(stamp.var_uid);
      if (found != entries_.end() && found->second.version == stamp.version &&
          found->second.want == want)
        return found->second.buffer;
    }
    // Reorder outside the lock; two threads may both do it, one result is kept.
    auto buffer = std::make_shared<std::vector<std::byte>>(want.get_size() + kAlign);
    dnnl::memory reordered(want, cpu_engine(), aligned_in(*buffer));
    to_want.execute(stream, user, reordered);
    stream.wait();
    std::lock_guard lock(mutex_);
    ++made_;
    bytes_ += buffer->size();
    if (bytes_ > kMaxBytes) {
      entries_.clear();
      bytes_ = buffer->size();
    }
    // One copy per array: an older content is dead (the array was written),
    // and another layout (another batch size) would double the weights' memory.
    Entry& entry = entries_[stamp.var_uid];
    if (entry.buffer) bytes_ -= entry.buffer->size();
    entry = {stamp.version, want, buffer};
    return buffer;
  }

  uint64_t made() {
    std::lock_guard lock(mutex_);
    return made_;
  }

  static void* aligned_in(const std::vector<std::byte>& buffer) {
    auto address = reinterpret_cast<uintptr_t>(buffer.data());
    return const_cast<std::byte*>(buffer.data()) + (aligned(address) - address);
  }

 private:
  static constexpr size_t kMaxBytes = size_t{1} << 30;
  struct Entry {
    uint64_t version;
    dnnl::memory::desc want;
    std::shared_ptr<const std::vector<std::byte>> buffer;
  };
  std::mutex mutex_;
  std::unordered_map<uint64_t, Entry> entries_;
  size_t bytes_ = 0;
  uint64_t made_ = 0;
};

}  // namespace

std::optional<ContentStamp> content_stamp(const TensorRef& t) {
  if (t.var == nullptr) return std::nullopt;
  return ContentStamp{t.var->uid(), t.var->version()};
}

uint64_t stamped_reorders_made() { return ReorderedInputs::get().made(); }

const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

int dnnl_threads() {
  // MX_DNNL_THREADS, else what the program set (dnnl_switch.h), else the budget.
  if (const int configured = runtime_config().dnnl_threads; configured > 0) return configured;
  if (const int set = dnnl_call_threads(); set > 0) return set;
  return thread_budget();
}

dnnl::memory::data_type dnnl_type(DType dtype) {
  if (dtype == DType::kFloat32) return dnnl::memory::data_type::f32;
  if (dtype == DType::kBFloat16) return dnnl::memory::data_type::bf16;
  throw Error(str("oneDNN kernels take float32 and bfloat16, not ", dtype_name(dtype)));
}

dnnl::memory::desc plain(const dims& shape, tag format, dnnl::memory::data_type dt) {
  return dnnl::memory::desc(shape, dt, format);
}

dnnl::primitive_attr scratch_attr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

DnnlStep make_step(dnnl::primitive primitive, const dnnl::primitive_desc_base& pd,
                   const std::vector<ArgSpec>& args) {
  DnnlStep step;
  step.primitive = std::move(primitive);
  step.scratchpad = pd.scratchpad_desc();
  const dnnl::engine& engine = cpu_engine();
  for (const ArgSpec& spec : args) {
    StepArg a;
    a.arg = spec.arg;
    a.output = spec.output;
    a.user = spec.user;
    a.want = pd.query_md(dnnl::query::exec_arg_md, spec.arg);
    if (a.want != a.user) {
      if (a.output)
        a.to_user = dnnl::reorder(dnnl::reorder::primitive_desc(engine, a.want, engine, a.user));
      else
        a.to_want = dnnl::reorder(dnnl::reorder::primitive_desc(engine, a.user, engine, a.want));
    }
    step.args.push_back(std::move(a));
  }
  return step;
}

void run(const DnnlStep& step, const std::vector<const void*>& buffers,
         const std::vector<OpReq>& req, const OpResources& resources,
         const std::vector<std::optional<ContentStamp>>& stamps) {
  auto stamp_of = [&](size_t i) -> const std::optional<ContentStamp>& {
    static const std::optional<ContentStamp> none;
    return i < stamps.size() && !step.args[i].output ? stamps[i] : none;
  };
  // Plan the temporary buffers, then take them in one piece.
  size_t total = aligned(step.scratchpad.get_size());
  for (size_t i = 0; i < step.args.size(); ++i) {
    const StepArg& a = step.args[i];
    const bool reordered = (a.to_want && !stamp_of(i)) || a.to_user;
    const bool scratch_output = a.output && req[i] != OpReq::kWrite && req[i] != OpReq::kInplace;
    if (reordered) total += aligned(a.want.get_size());
    if (scratch_output) total += aligned(a.user.get_size());
  }
  std::byte* base = static_cast<std::byte*>(
      resources.temp != nullptr ? resources.temp_space(total + kAlign) : thread_scratch(total));
  if (auto address = reinterpret_cast<uintptr_t>(base); address % kAlign != 0)
    base += aligned(address) - address;
  auto take = [&](size_t bytes) {
    std::byte* p = base;
    base += aligned(bytes);
    return p;
  };

  const dnnl::engine& engine = cpu_engine();
  thread_local dnnl::stream stream(engine);  // in-order, one per calling thread
  omp_set_num_threads(dnnl_threads());
  std::unordered_map<int, dnnl::memory> exec_args;
  if (step.scratchpad.get_size() > 0)
    exec_args[DNNL_ARG_SCRATCHPAD] =
        dnnl::memory(step.scratchpad, engine, take(step.scratchpad.get_size()));
  struct Pending {
    const StepArg* arg;
    dnnl::memory want, user;
    OpReq req;
    void* target;
  };
  std::vector<Pending> outputs;
  // Keeps the reordered inputs taken from the cache alive until the primitive ran.
  std::vector<std::shared_ptr<const std::vector<std::byte>>> kept;
  for (size_t i = 0; i < step.args.size(); ++i) {
    const StepArg& a = step.args[i];
    void* given = const_cast<void*>(buffers[i]);
    if (!a.output) {
      dnnl::memory user(a.user, engine, given);
      if (a.to_want && stamp_of(i)) {
        kept.push_back(
            ReorderedInputs::get().find_or_make(*stamp_of(i), a.want, *a.to_want, user, stream));
        exec_args[a.arg] = dnnl::memory(a.want, engine, ReorderedInputs::aligned_in(*kept.back()));
      } else if (a.to_want) {
        dnnl::memory want(a.want, engine, take(a.want.get_size()));
        a.to_want->execute(stream, user, want);
        exec_args[a.arg] = want;
      } else {
        exec_args[a.arg] = user;
      }
      continue;
    }
    const bool direct = req[i] == OpReq::kWrite || req[i] == OpReq::kInplace;
    dnnl::memory user(a.user, engine, direct ? given : take(a.user.get_size()));
    dnnl::memory want = a.to_user ? dnnl::memory(a.want, engine, take(a.want.get_size())) : user;
    exec_args[a.arg] = want;
    outputs.push_back({&a, want, user, req[i], given});
  }
  step.primitive.execute(stream, exec_args);
  for (Pending& out : outputs) {
    if (out.arg->to_user) out.arg->to_user->execute(stream, out.want, out.user);
  }
  stream.wait();
  for (const Pending& out : outputs) {
    if (out.req != OpReq::kAdd) continue;
    auto add = [&](auto* target) {
      using T = std::remove_pointer_t<decltype(target)>;
      const auto* sum = static_cast<const T*>(out.user.get_data_handle());
      const int64_t n = static_cast<int64_t>(out.arg->user.get_size() / sizeof(T));
      parallel_for(n, 32768, [&](int64_t begin, int64_t end) {
        for (int64_t k = begin; k < end; ++k) target[k] = T(float(target[k]) + float(sum[k]));
      });
    };
    if (out.arg->user.data_type() == dnnl::memory::data_type::bf16)
      add(static_cast<bf16_t*>(out.target));
    else
      add(static_cast<float*>(out.target));
  }
}

std::shared_ptr<const DnnlStep> cached_step(const std::string& key,
                                            const std::function<DnnlStep()>& make) {
  static std::mutex mutex;
  static std::unordered_map<std::string, std::shared_ptr<const DnnlStep>> cache;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  auto step = std::make_shared<const DnnlStep>(make());
  std::lock_guard<std::mutex> lock(mutex);
  // A bound on shapes seen (a long run with varying shapes): start over.
  if (cache.size() >= 4096) cache.clear();
  return cache.emplace(key, std::move(step)).first->second;
}

}  // namespace mx::op::dnnl_impl

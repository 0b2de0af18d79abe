#include "op/resources.h"

#include "base/error.h"
#include "base/gpu.h"

namespace mx::op {

TempSpace::TempSpace(Context ctx) : ctx_(ctx), var_(Engine::get().new_var()) {}

void* TempSpace::get(size_t bytes) {
  if (bytes > storage_.size()) {
    // Kernels queued earlier may still use the old block (the engine does
    // not wait for a GPU stream between operations); growing is rare.
    if (ctx_.is_gpu() && storage_.size() > 0) gpu::synchronize_device(ctx_.id);
    storage_.reset();  // give the old block back before taking a bigger one
    storage_ = allocate_storage(ctx_, bytes, "operator temporary space");
  }
  return storage_.data();
}

RandomGenerator::RandomGenerator(Context, uint64_t seed)
    : engine_(seed), var_(Engine::get().new_var()) {}

ResourceManager::ResourceManager() = default;

ResourceManager& ResourceManager::get() {
  // The per-device resources are a registry like the storage pools, never
  // destroyed: operations that use them may still be running while the
  // program's static objects are destroyed at exit (the engine, itself such
  // an object, waits for them in its destructor).
  static ResourceManager& manager = *new ResourceManager;
  return manager;
}

TempSpace& ResourceManager::temp_space(Context ctx) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [c, t] : temp_)
    if (c == ctx) return *t;
  temp_.emplace_back(ctx, std::make_unique<TempSpace>(ctx));
  return *temp_.back().second;
}

RandomGenerator& ResourceManager::random(Context ctx) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [c, r] : random_)
    if (c == ctx) return *r;
  random_.emplace_back(ctx, std::make_unique<RandomGenerator>(ctx, seed_));
  return *random_.back().second;
}

void ResourceManager::seed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(mutex_);
  seed_ = seed;
  for (auto& [ctx, r] : random_) {
    RandomGenerator* gen = r.get();
    Engine::get().push([gen, seed](RunContext) { gen->seed(seed); }, Context::cpu(), {},
                       {gen->var()}, FnProperty::kNormal, 0, "seed random generator");
  }
}

void* OpResources::temp_space(size_t bytes) const {
  MX_CHECK(temp != nullptr, "operator did not request temporary space");
  return temp->get(bytes);
}

std::mt19937_64& OpResources::rng() const {
  MX_CHECK(random != nullptr, "operator did not request a random generator");
  return random->engine();
}

}  // namespace mx::op

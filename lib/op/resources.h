// Resources an operator may ask for (MXNet's ResourceRequest): temporary
// memory and a random number generator. Each is an engine variable per
// device, so operations that use the same one are serialized by the engine
// and a seeded run is reproducible.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <random>

#include "base/context.h"
#include "engine/engine.h"
#include "storage/storage.h"

namespace mx::op {

enum class ResourceKind { kTempSpace, kRandom };

// Scratch memory that grows to the largest request and is reused.
class TempSpace {
 public:
  explicit TempSpace(Context ctx);
  // At least `bytes` bytes, valid until the operation returns.
  void* get(size_t bytes);
  Var* var() const { return var_.get(); }
  size_t capacity() const { return storage_.size(); }

 private:
  Context ctx_;
  Storage storage_;
  VarHandle var_;
};

// The generator of one device: a Mersenne twister with a seed.
class RandomGenerator {
 public:
  explicit RandomGenerator(Context ctx, uint64_t seed = 0);
  std::mt19937_64& engine() { return engine_; }
  void seed(uint64_t seed) { engine_.seed(seed); }
  Var* var() const { return var_.get(); }

 private:
  std::mt19937_64 engine_;
  VarHandle var_;
};

// The resources of each device, created on first use.
class ResourceManager {
 public:
  static ResourceManager& get();
  TempSpace& temp_space(Context ctx);
  RandomGenerator& random(Context ctx);
  // Reseeds every device's generator (after pending operations that use it).
  void seed(uint64_t seed);

 private:
  ResourceManager();

  std::mutex mutex_;
  uint64_t seed_ = 0;
  std::vector<std::pair<Context, std::unique_ptr<TempSpace>>> temp_;
  std::vector<std::pair<Context, std::unique_ptr<RandomGenerator>>> random_;
};

// What a running kernel can reach of its requested resources.
struct OpResources {
  TempSpace* temp = nullptr;
  RandomGenerator* random = nullptr;

  void* temp_space(size_t bytes) const;
  std::mt19937_64& rng() const;
};

}  // namespace mx::op

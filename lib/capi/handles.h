// The objects behind the C API's handles. Each derives from ApiHandle, whose
// kind is checked when a handle comes back from C, so a handle of the wrong
// kind (a SymbolHandle passed as an NDArrayHandle) is refused with a message
// instead of being misread. A handle is a unique_ptr released to C (the only
// raw owning pointers of the layer) and taken back by its Free function.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "autograd/tape.h"
#include "base/error.h"
#include "base/strings.h"
#include "executor/executor.h"
#include "graph/symbol.h"
#include "io/data_iter.h"
#include "kvstore/coordinator.h"

namespace mx::capi {

enum class HandleKind : uint32_t {
  kNDArray = 0x6d784e44,  // distinct values, so stray memory rarely passes
  kSymbol = 0x6d785359,
  kExecutor = 0x6d784558,
  kKVStore = 0x6d784b56,
  kDataIter = 0x6d784449,
  kFreed = 0x6d784646,
};
const char* handle_kind_name(HandleKind kind);

class ApiHandle {
 public:
  explicit ApiHandle(HandleKind kind) : kind_(kind) {}
  ApiHandle(const ApiHandle&) = delete;
  ApiHandle& operator=(const ApiHandle&) = delete;
  HandleKind kind() const { return kind_; }

 protected:
  // Not virtual: handles are deleted as their own type (take_handle).
  ~ApiHandle() { kind_ = HandleKind::kFreed; }

 private:
  HandleKind kind_;
};

// An NDArrayHandle: the array and its autograd entry.
struct ApiNDArray : ApiHandle {
  static constexpr HandleKind kKind = HandleKind::kNDArray;
  explicit ApiNDArray(autograd::Array a) : ApiHandle(kKind), array(std::move(a)) {}
  autograd::Array array;
};

// A SymbolHandle. An atomic symbol (MXSymbolCreateAtomicSymbol) is an
// operator with parameters waiting for MXSymbolCompose.
struct ApiSymbol : ApiHandle {
  static constexpr HandleKind kKind = HandleKind::kSymbol;
  struct Atomic {
    std::string op;
    std::map<std::string, std::string> attrs;
  };
  explicit ApiSymbol(graph::Symbol s) : ApiHandle(kKind), symbol(std::move(s)) {}
  explicit ApiSymbol(Atomic a) : ApiHandle(kKind), atomic(std::move(a)) {}
  graph::Symbol symbol;
  std::optional<Atomic> atomic;
  // The symbol, refusing an atomic one that was never composed.
  const graph::Symbol& composed(const char* what) const {
    if (atomic)
      throw InputError(str(what, " is an operator (", atomic->op,
                           ") not yet applied to inputs: ", "call MXSymbolCompose first"));
    return symbol;
  }
};

// An ExecutorHandle.
struct ApiExecutor : ApiHandle {
  static constexpr HandleKind kKind = HandleKind::kExecutor;
  explicit ApiExecutor(std::unique_ptr<Executor> e) : ApiHandle(kKind), exe(std::move(e)) {}
  std::unique_ptr<Executor> exe;
};

// A KVStoreHandle: the job this process belongs to (one process for local
// and device, the workers and servers of an mpirun for dist), which owns
// the store.
struct ApiKVStore : ApiHandle {
  static constexpr HandleKind kKind = HandleKind::kKVStore;
  ApiKVStore(std::string t, std::unique_ptr<kvstore::Coordinator> j)
      : ApiHandle(kKind), type(std::move(t)), job(std::move(j)) {}
  std::string type;
  std::unique_ptr<kvstore::Coordinator> job;
};

// A DataIterHandle and its current batch.
struct ApiDataIter : ApiHandle {
  static constexpr HandleKind kKind = HandleKind::kDataIter;
  explicit ApiDataIter(std::unique_ptr<DataIter> i) : ApiHandle(kKind), iter(std::move(i)) {}
  std::unique_ptr<DataIter> iter;
  std::optional<DataBatch> batch;
};

template <typename T>
void* to_handle(std::unique_ptr<T> object) {
  return static_cast<ApiHandle*>(object.release());
}

// The object behind `handle`; `what` names the argument in errors.
template <typename T>
T& handle_cast(void* handle, const char* what) {
  if (handle == nullptr) throw InputError(str(what, " is NULL"));
  auto* base = static_cast<ApiHandle*>(handle);
  if (base->kind() != T::kKind)
    throw InputError(
        str(what, " is ", handle_kind_name(base->kind()), ", not ", handle_kind_name(T::kKind)));
  return static_cast<T&>(*base);
}

// Takes ownership back (the Free functions); NULL gives null.
template <typename T>
std::unique_ptr<T> take_handle(void* handle, const char* what) {
  if (handle == nullptr) return nullptr;
  return std::unique_ptr<T>(&handle_cast<T>(handle, what));
}

}  // namespace mx::capi

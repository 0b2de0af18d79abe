#include "engine/operation.h"

#include <algorithm>

#include "base/error.h"

namespace mx {

void normalize_dependencies(std::vector<Var*>& reads, std::vector<Var*>& writes) {
  auto sort_unique = [](std::vector<Var*>& v) {
    v.erase(std::remove(v.begin(), v.end(), nullptr), v.end());
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  };
  sort_unique(writes);
  sort_unique(reads);
  if (!writes.empty()) {
    reads.erase(
        std::remove_if(reads.begin(), reads.end(),
                       [&](Var* v) { return std::binary_search(writes.begin(), writes.end(), v); }),
        reads.end());
  }
}

std::exception_ptr failed_input(const Operation& op) {
  for (Var* v : op.reads)
    if (auto e = v->exception()) return e;
  return nullptr;
}

std::exception_ptr name_exception(const std::string& name, std::exception_ptr error) {
  const std::string who = name.empty() ? "an unnamed operation" : "operation '" + name + "'";
  try {
    std::rethrow_exception(error);
  } catch (const Error& e) {
    return std::make_exception_ptr(Error("in " + who + ": " + e.what(), e.kind()));
  } catch (const std::exception& e) {
    return std::make_exception_ptr(Error("in " + who + ": " + e.what()));
  } catch (...) {
    return std::make_exception_ptr(Error("in " + who + ": unknown exception"));
  }
}

void rethrow(std::exception_ptr error) { std::rethrow_exception(std::move(error)); }

}  // namespace mx

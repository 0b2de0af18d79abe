// Argument checks and return buffers shared by the C API's files.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/context.h"
#include "base/dtype.h"
#include "capi/handles.h"

namespace mx::capi {

// Throws InputError(what) unless ok.
void require(bool ok, const char* what);
// dev_type 1 cpu, 2 gpu, 3 cpu_pinned (MXNet's numbers).
Context device(int dev_type, int dev_id);
int device_type_of(Context ctx);
DType dtype_from_flag(int flag, const char* what);
// count strings, none NULL.
std::vector<std::string> strings(size_t count, const char* const* items, const char* name);
// count key = value pairs of strings.
std::map<std::string, std::string> string_pairs(size_t count, const char* const* keys,
                                                const char* const* vals);
// count NDArray handles (`name` in messages); `allow_null` keeps NULL as a
// none array.
std::vector<autograd::Array> arrays(size_t count, void* const* handles, const char* name,
                                    bool allow_null = false);
// A new NDArray handle.
void* new_array_handle(autograd::Array array);

// What a function returns through pointers: kept per thread by the function
// (a thread_local ReturnBuffer in it), valid until the thread calls it again.
struct ReturnStrings {
  std::vector<std::string> strings;
  std::vector<const char*> pointers;
  const char** set(std::vector<std::string> values);
};
// Shapes as MXNet's (ndim list, pointer list into one data list).
template <typename Dim>
struct ReturnShapes {
  std::vector<std::vector<Dim>> dims;
  std::vector<Dim> ndim;
  std::vector<const Dim*> data;
  void set(const std::vector<Shape>& shapes, bool numpy_unknown);
};
// New handles, owned by the caller once returned.
struct ReturnHandles {
  std::vector<void*> handles;
};

}  // namespace mx::capi

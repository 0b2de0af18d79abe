// Named NDArray lists in MXNet's .params format (byte-compatible with
// mx.nd.save / mx.nd.load of MXNet 1.x; see docs/file-formats.md).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <span>
#include <string>
#include <vector>

#include "ndarray/ndarray.h"

namespace mx {

// Arrays with optional names (MXNet writes either no names or one per array;
// checkpoints prefix them with "arg:" and "aux:").
struct NamedArrays {
  std::vector<std::string> names;  // empty, or one per array
  std::vector<NDArray> arrays;

  // The array called `name`; throws Error listing close names if absent.
  const NDArray& get(const std::string& name) const;
};

// Writes atomically (temporary file + rename). The file uses MXNet's V2
// array magic, readable by MXNet with default settings; when an array is 0-d
// or has a zero-size dimension (which V2 cannot express) the file uses the
// V3 magic that MXNet reads in its numpy-shape mode.
void save_params(const std::string& path, const NamedArrays& arrays);
void write_params(std::ostream& out, const NamedArrays& arrays);

// Reads a file written by mx or by MXNet 1.x (array magics V1, V2, V3 and the
// pre-V1 layout). Arrays are placed on `ctx`. A truncated, corrupted or
// hostile file gives InputError naming the file, the byte offset and what
// was expected; sizes are checked against the file before memory is taken.
NamedArrays load_params(const std::string& path, Context ctx = Context::cpu());
// The same from a stream of `size` bytes; `source` names it in errors.
NamedArrays read_params(std::istream& in, uint64_t size, const std::string& source,
                        Context ctx = Context::cpu());
// The same from bytes in memory (the C API receives .params files as bytes),
// read in place without a copy.
NamedArrays read_params(std::span<const char> bytes, const std::string& source,
                        Context ctx = Context::cpu());

}  // namespace mx

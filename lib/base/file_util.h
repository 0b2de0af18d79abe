// Reading and writing whole files safely: clear errors that name the file,
// and writes that go to a temporary name and are renamed into place, so an
// interrupted program leaves the previous good file.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>

namespace mx {

// Calls write(stream) on a temporary file next to `path`, then renames it to
// `path`. On any failure (including an exception from `write`) the
// temporary file is removed, `path` is untouched, and an Error is thrown.
void write_file_atomically(const std::string& path,
                           const std::function<void(std::ostream&)>& write);

// Size of a regular file in bytes; throws InputError if it cannot be opened.
uint64_t file_size(const std::string& path);

// The whole content of a regular file; throws InputError naming the file if
// it cannot be opened or read, an I/O error included.
std::string read_file(const std::string& path);

}  // namespace mx

// Feeds arbitrary bytes to the IDX reader (MNIST, Fashion-MNIST; plain or
// gzip): it must return the array or throw InputError, never crash, hang or
// allocate more than the data it actually read.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "base/error.h"
#include "fuzz_temp_dir.h"
#include "io/idx_file.h"

namespace {

// The reader takes a path: one file per process, rewritten for each input.
const std::string& input_path(bool gzip) {
  static const mx::fuzz::FuzzTempDir made("idx");  // removed at exit
  static const std::string dir = made.path();
  static const std::string plain = dir + "/input-idx3-ubyte", gz = plain + ".gz";
  return gzip ? gz : plain;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Inputs that start as gzip does are read as .gz files.
  const bool gzip = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
  const std::string& path = input_path(gzip);
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  for (int64_t max_items : {int64_t{-1}, int64_t{1}}) {
    try {
      mx::IdxArray a = mx::read_idx(path, max_items);
      int64_t values = a.items() * a.item_size();
      if (values != static_cast<int64_t>(a.data.size())) __builtin_trap();
    } catch (const mx::InputError&) {
    }
  }
  return 0;
}

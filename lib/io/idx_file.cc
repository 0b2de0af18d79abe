#include "io/idx_file.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <memory>

#include "base/error.h"
#include "base/file_util.h"

namespace mx {
namespace {

constexpr uint8_t kUnsignedByte = 0x08;
// A sanity bound on one file's values (64 GiB): a header that claims more
// is corrupt.
constexpr int64_t kMaxValues = int64_t{1} << 36;

const char* type_name(uint8_t type) {
  switch (type) {
    case 0x08: return "unsigned byte";
    case 0x09: return "signed byte";
    case 0x0B: return "int16";
    case 0x0C: return "int32";
    case 0x0D: return "float32";
    case 0x0E: return "float64";
    default: return "unknown";
  }
}

struct GzCloser {
  void operator()(gzFile_s* f) const { gzclose(f); }
};

class GzReader {
 public:
  explicit GzReader(const std::string& path) : path_(path) {
    file_size(path);  // a clear error for a missing file or a directory
    file_.reset(gzopen(path.c_str(), "rb"));
    if (!file_) throw InputError("cannot open '" + path + "': " + std::strerror(errno));
    gzbuffer(file_.get(), 1 << 17);
  }

  // Reads up to n bytes; returns how many (fewer only at the end).
  size_t read(void* dst, size_t n) {
    size_t done = 0;
    while (done < n) {
      const unsigned chunk = static_cast<unsigned>(std::min<size_t>(n - done, 1u << 30));
      const int got = gzread(file_.get(), static_cast<char*>(dst) + done, chunk);
      if (got < 0) {
        int code = 0;
        const char* message = gzerror(file_.get(), &code);
        throw InputError(where() + ": " + (message ? message : "read error") +
                         " (a damaged .gz file?)");
      }
      if (got == 0) break;
      done += static_cast<size_t>(got);
      offset_ += static_cast<uint64_t>(got);
    }
    return done;
  }

  std::string where() const {
    return path_ + ": byte " + std::to_string(offset_) +
           (gzdirect(file_.get()) ? "" : " of the uncompressed data");
  }

 private:
  std::string path_;
  std::unique_ptr<gzFile_s, GzCloser> file_;
  uint64_t offset_ = 0;
};

}  // namespace

int64_t IdxArray::item_size() const {
  int64_t n = 1;
  for (size_t i = 1; i < dims.size(); ++i) n *= dims[i];
  return n;
}

IdxArray read_idx(const std::string& path, int64_t max_items) {
  GzReader in(path);
  unsigned char magic[4];
  const size_t got = in.read(magic, 4);
  if (got < 4)
    throw InputError(in.where() +
                     ": the file ends inside the 4-byte IDX magic; is it an IDX file?");
  if (magic[0] != 0 || magic[1] != 0)
    throw InputError(path + ": byte 0: not an IDX file (it starts with bytes " +
                     std::to_string(magic[0]) + ", " + std::to_string(magic[1]) +
                     "; IDX files start with 0, 0, type, ndim)");
  if (magic[2] != kUnsignedByte)
    throw InputError(path + ": byte 2: element type " + std::to_string(magic[2]) + " (" +
                     type_name(magic[2]) +
                     ") is not supported; only unsigned bytes (type 8, as in MNIST) are");
  const int ndim = magic[3];
  if (ndim < 1 || ndim > 8)
    throw InputError(path + ": byte 3: " + std::to_string(ndim) +
                     " dimensions; IDX files of 1 to 8 dimensions are supported");
  IdxArray array;
  int64_t total = 1;
  for (int i = 0; i < ndim; ++i) {
    unsigned char b[4];
    if (in.read(b, 4) < 4)
      throw InputError(in.where() + ": the file ends inside the IDX header (" +
                       std::to_string(ndim) + " dimensions of 4 bytes)");
    const int64_t d = int64_t{b[0]} << 24 | int64_t{b[1]} << 16 | int64_t{b[2]} << 8 | b[3];
    array.dims.push_back(d);
    if (i == 0 && max_items >= 0) array.dims[0] = std::min(d, max_items);
    // Zero dimensions are left out of the product, so that a zero count
    // cannot hide an item size past the bound (it overflowed int64).
    if (d == 0) continue;
    if (total > kMaxValues / d)
      throw InputError(path + ": byte " + std::to_string(4 + 4 * i) +
                       ": the dimensions describe more than 2^36 values; the header is damaged");
    total *= d;
  }
  const int64_t wanted = array.dims[0] * array.item_size();
  // Grow with the data read, so a damaged header cannot make us allocate.
  constexpr size_t kChunk = size_t{1} << 22;
  while (array.data.size() < static_cast<size_t>(wanted)) {
    const size_t have = array.data.size();
    const size_t step = std::min<size_t>(kChunk, static_cast<size_t>(wanted) - have);
    array.data.resize(have + step);
    const size_t n = in.read(array.data.data() + have, step);
    if (n < step) {
      array.data.resize(have + n);
      throw InputError(in.where() + ": the file ends after " + std::to_string(have + n) +
                       " bytes of values, but " + std::to_string(wanted) +
                       " are needed for the items its header announces; the file is truncated");
    }
  }
  return array;
}

}  // namespace mx

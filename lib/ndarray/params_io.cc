#include "ndarray/params_io.h"

#include <fstream>
#include <istream>
#include <limits>
#include <ostream>
#include <sstream>
#include <streambuf>

#include "base/error.h"
#include "base/file_util.h"
#include "base/strings.h"

namespace mx {
namespace {

constexpr uint64_t kListMagic = 0x112;
constexpr uint32_t kArrayMagicV1 = 0xF993fac8;  // int32 ndim + int64 dims, no stype
constexpr uint32_t kArrayMagicV2 = 0xF993fac9;  // + stype; ndim 0 means "none"
constexpr uint32_t kArrayMagicV3 = 0xF993faca;  // numpy shapes: ndim 0 is a scalar, -1 "none"
constexpr int32_t kDenseStorage = 0;

// Reads little-endian values from a stream of known size, failing with the
// byte offset instead of reading past the end.
class BoundedReader {
 public:
  BoundedReader(std::istream& in, uint64_t size, std::string source)
      : in_(in), size_(size), source_(std::move(source)) {}

  uint64_t offset() const { return offset_; }
  uint64_t remaining() const { return size_ - offset_; }

  [[noreturn]] void fail(uint64_t at, const std::string& what) const {
    throw InputError(str(source_, ": byte ", at, ": ", what));
  }

  void read(void* dst, uint64_t bytes, const char* what) {
    if (bytes > remaining())
      fail(offset_, str("file ends while reading ", what, " (", bytes, " bytes needed, ",
                        remaining(), " left); the file is truncated or not a .params file"));
    in_.read(static_cast<char*>(dst), static_cast<std::streamsize>(bytes));
    if (static_cast<uint64_t>(in_.gcount()) != bytes) fail(offset_, "read error");
    offset_ += bytes;
  }

  template <typename T>
  T value(const char* what) {
    T v{};
    read(&v, sizeof v, what);
    return v;
  }

 private:
  std::istream& in_;
  uint64_t size_;
  std::string source_;
  uint64_t offset_ = 0;
};

// Reads one array; returns a none array for MXNet's "none" entries.
NDArray read_array(BoundedReader& r, Context ctx, size_t index) {
  const uint64_t start = r.offset();
  const std::string which = str("array ", index);
  uint32_t magic = r.value<uint32_t>("the array magic");
  int32_t ndim = 0;
  std::vector<int64_t> dims;
  bool numpy_shape = false;

  auto check_ndim = [&](int64_t n, uint64_t at) {
    if (n < 0 || n > Shape::kMaxNdim)
      r.fail(at, str(which, ": ndim ", n, " is outside [0, ", Shape::kMaxNdim, "]"));
  };

  if (magic == kArrayMagicV2 || magic == kArrayMagicV3) {
    numpy_shape = magic == kArrayMagicV3;
    const uint64_t at = r.offset();
    int32_t stype = r.value<int32_t>("the storage type");
    if (stype != kDenseStorage)
      r.fail(at, str(which, ": storage type ", stype,
                     " (sparse) is not supported; only dense arrays (0) are"));
  }
  if (magic == kArrayMagicV1 || magic == kArrayMagicV2 || magic == kArrayMagicV3) {
    const uint64_t at = r.offset();
    ndim = r.value<int32_t>("ndim");
    if (numpy_shape && ndim == -1) return NDArray();  // unknown shape: a none array
    check_ndim(ndim, at);
    dims.resize(static_cast<size_t>(ndim));
    if (ndim > 0)
      r.read(dims.data(), sizeof(int64_t) * static_cast<uint64_t>(ndim), "the dimensions");
  } else {
    // Before V1 there was no magic: the first word is ndim, dims are uint32.
    if (magic > static_cast<uint32_t>(Shape::kMaxNdim))
      r.fail(start, str(which, ": unknown array magic 0x", std::hex, magic,
                        " (expected 0xf993fac9, 0xf993faca or 0xf993fac8)"));
    ndim = static_cast<int32_t>(magic);
    std::vector<uint32_t> small(static_cast<size_t>(ndim));
    if (ndim > 0)
      r.read(small.data(), sizeof(uint32_t) * static_cast<uint64_t>(ndim), "the dimensions");
    dims.assign(small.begin(), small.end());
  }
  // Without numpy shapes, ndim 0 marks a "none" array and nothing follows.
  if (!numpy_shape && ndim == 0) return NDArray();

  int64_t count = 1;
  for (int64_t d : dims) {
    if (d < 0) r.fail(start, str(which, ": negative dimension in ", Shape(dims).to_string()));
    if (d != 0 && count > std::numeric_limits<int64_t>::max() / d)
      r.fail(start, str(which, ": shape ", Shape(dims).to_string(), " is too large"));
    count *= d;
  }

  const uint64_t ctx_at = r.offset();
  int32_t dev_type = r.value<int32_t>("the device type");
  r.value<int32_t>("the device id");
  if (dev_type < 1 || dev_type > 3)
    r.fail(ctx_at,
           str(which, ": device type ", dev_type, " is not cpu (1), gpu (2) or cpu_pinned (3)"));
  const uint64_t type_at = r.offset();
  int32_t type_flag = r.value<int32_t>("the type flag");
  if (!is_valid_dtype_flag(type_flag))
    r.fail(type_at, str(which, ": type flag ", type_flag,
                        " is not one of 0..6 or 12 (float32, float64, float16, uint8, int32, int8, "
                        "int64, bfloat16)"));
  const DType dtype = static_cast<DType>(type_flag);
  const uint64_t elem = dtype_size(dtype);
  if (static_cast<uint64_t>(count) > r.remaining() / elem) {
    const uint64_t max = std::numeric_limits<uint64_t>::max();
    const std::string needed = static_cast<uint64_t>(count) > max / elem
                                   ? "more than " + std::to_string(max)
                                   : std::to_string(static_cast<uint64_t>(count) * elem);
    r.fail(r.offset(),
           str(which, ": shape ", Shape(dims).to_string(), " of ", dtype_name(dtype), " needs ",
               needed, " bytes, but only ", r.remaining(), " are left in the file"));
  }
  NDArray host(Shape(dims), Context::cpu(), dtype);
  r.read(host.raw_data(), static_cast<uint64_t>(count) * elem, "the array data");
  return ctx == Context::cpu() ? host : host.copy_to(ctx);
}

bool needs_numpy_shape(const NDArray& a) {
  if (a.is_none()) return false;
  if (a.shape().ndim() == 0) return true;
  for (int64_t d : a.shape())
    if (d == 0) return true;
  return false;
}

template <typename T>
void put(std::ostream& out, const T& v) {
  out.write(reinterpret_cast<const char*>(&v), sizeof v);
}

}  // namespace

const NDArray& NamedArrays::get(const std::string& name) const {
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return arrays[i];
  throw Error("no array named '" + name + "'" + did_you_mean(name, names));
}

void write_params(std::ostream& out, const NamedArrays& list) {
  if (!list.names.empty() && list.names.size() != list.arrays.size())
    throw Error(
        str("save_params: ", list.names.size(), " names for ", list.arrays.size(), " arrays"));
  bool numpy_shape = false;
  for (const auto& a : list.arrays) numpy_shape = numpy_shape || needs_numpy_shape(a);
  const uint32_t magic = numpy_shape ? kArrayMagicV3 : kArrayMagicV2;

  put(out, kListMagic);
  put(out, uint64_t{0});
  put(out, static_cast<uint64_t>(list.arrays.size()));
  for (const auto& a : list.arrays) {
    put(out, magic);
    put(out, kDenseStorage);
    if (a.is_none()) {
      put(out, int32_t{numpy_shape ? -1 : 0});
      continue;
    }
    put(out, static_cast<int32_t>(a.shape().ndim()));
    for (int64_t d : a.shape()) put(out, d);
    put(out, static_cast<int32_t>(DeviceType::kCPU));
    put(out, int32_t{0});
    put(out, static_cast<int32_t>(a.dtype()));
    NDArray host = a.ctx().is_gpu() ? a.copy_to(Context::cpu()) : a;
    host.wait_to_read();
    out.write(static_cast<const char*>(host.raw_data()),
              static_cast<std::streamsize>(host.bytes()));
  }
  put(out, static_cast<uint64_t>(list.names.size()));
  for (const auto& name : list.names) {
    put(out, static_cast<uint64_t>(name.size()));
    out.write(name.data(), static_cast<std::streamsize>(name.size()));
  }
}

void save_params(const std::string& path, const NamedArrays& arrays) {
  // Wait for the values before the temporary file is created.
  for (const auto& a : arrays.arrays) a.wait_to_read();
  write_file_atomically(path, [&](std::ostream& out) { write_params(out, arrays); });
}

NamedArrays read_params(std::istream& in, uint64_t size, const std::string& source, Context ctx) {
  BoundedReader r(in, size, source);
  uint64_t magic = r.value<uint64_t>("the file magic");
  if (magic != kListMagic)
    r.fail(0, str("not an MXNet .params file (magic 0x", std::hex, magic, ", expected 0x112)"));
  r.value<uint64_t>("the reserved word");
  const uint64_t count_at = r.offset();
  uint64_t count = r.value<uint64_t>("the array count");
  // The smallest array entry is 8 bytes (a magic and ndim 0).
  if (count > r.remaining() / 8)
    r.fail(count_at,
           str("array count ", count, " cannot fit in the ", r.remaining(), " bytes that follow"));
  NamedArrays result;
  result.arrays.reserve(count);
  for (uint64_t i = 0; i < count; ++i) result.arrays.push_back(read_array(r, ctx, i));

  const uint64_t names_at = r.offset();
  uint64_t name_count = r.value<uint64_t>("the name count");
  if (name_count != 0 && name_count != count)
    r.fail(names_at, str(name_count, " names for ", count, " arrays (expected 0 or ", count, ")"));
  for (uint64_t i = 0; i < name_count; ++i) {
    const uint64_t at = r.offset();
    uint64_t length = r.value<uint64_t>("a name length");
    if (length > r.remaining())
      r.fail(at, str("name ", i, " is ", length, " bytes long, but only ", r.remaining(),
                     " are left in the file"));
    std::string name(length, '\0');
    r.read(name.data(), length, "a name");
    result.names.push_back(std::move(name));
  }
  if (r.remaining() != 0)
    r.fail(r.offset(), str(r.remaining(), " unexpected bytes after the last name"));
  return result;
}

namespace {

// A read-only stream buffer over bytes someone else owns.
class ByteBuffer : public std::streambuf {
 public:
  explicit ByteBuffer(std::span<const char> bytes) {
    // streambuf's get area is char*, but nothing here writes through it.
    char* begin = const_cast<char*>(bytes.data());
    setg(begin, begin, begin + bytes.size());
  }
};

}  // namespace

NamedArrays read_params(std::span<const char> bytes, const std::string& source, Context ctx) {
  ByteBuffer buffer(bytes);
  std::istream in(&buffer);
  return read_params(in, bytes.size(), source, ctx);
}

NamedArrays load_params(const std::string& path, Context ctx) {
  const uint64_t size = file_size(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("cannot open '" + path + "'");
  return read_params(in, size, path, ctx);
}

}  // namespace mx

#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/file_util.h"
#include "base/strings.h"
#include "ndarray/params_io.h"

using namespace mx;

namespace {

const std::string kDir = std::string(MX_FIXTURES_DIR) + "/params/";

// One array as the manifest (written alongside the fixtures by real MXNet) describes it.
struct Expected {
  std::string name;
  bool none = false;
  DType dtype = DType::kFloat32;
  Shape shape;
  std::vector<double> values;
};

std::map<std::string, std::vector<Expected>> read_manifest() {
  std::ifstream in(kDir + "manifest.txt");
  REQUIRE(in.good());
  std::map<std::string, std::vector<Expected>> files;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    std::string file, name, kind;
    ls >> file >> name >> kind;
    auto& list = files[file];
    if (kind == "EMPTY") continue;
    Expected e;
    e.name = name;
    if (kind == "NONE") {
      e.none = true;
    } else {
      e.dtype = static_cast<DType>(std::stoi(kind));
      int ndim = 0;
      ls >> ndim;
      std::vector<int64_t> dims(static_cast<size_t>(ndim));
      for (auto& d : dims) ls >> d;
      e.shape = Shape(dims);
      int64_t count = 0;
      ls >> count;
      for (int64_t i = 0; i < count; ++i) {
        std::string v;
        ls >> v;
        e.values.push_back(std::strtod(v.c_str(), nullptr));
      }
    }
    list.push_back(e);
  }
  return files;
}

std::vector<double> values_of(const NDArray& a) {
  std::vector<double> out;
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (const T& v : a.to_vector<T>()) {
      if constexpr (std::is_same_v<T, half_t>)
        out.push_back(static_cast<float>(v));
      else
        out.push_back(static_cast<double>(v));
    }
  });
  return out;
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

NamedArrays parse(const std::string& bytes) {
  std::istringstream in(bytes);
  return read_params(in, bytes.size(), "test.params");
}

std::string error_of(const std::string& bytes) {
  try {
    parse(bytes);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

template <typename T>
void put(std::string& s, T v) {
  s.append(reinterpret_cast<const char*>(&v), sizeof v);
}

// A valid file holding one float32 array of shape (2,) named "w".
std::string small_file() {
  std::string s;
  put<uint64_t>(s, 0x112);
  put<uint64_t>(s, 0);
  put<uint64_t>(s, 1);
  put<uint32_t>(s, 0xF993fac9);
  put<int32_t>(s, 0);
  put<int32_t>(s, 1);
  put<int64_t>(s, 2);
  put<int32_t>(s, 1);
  put<int32_t>(s, 0);
  put<int32_t>(s, 0);
  put<float>(s, 1.5f);
  put<float>(s, -2.0f);
  put<uint64_t>(s, 1);
  put<uint64_t>(s, 1);
  s += "w";
  return s;
}

}  // namespace

TEST_CASE("files written by real MXNet 1.9.1 load with exact names, dtypes, shapes and values") {
  auto manifest = read_manifest();
  REQUIRE(manifest.size() >= 7);
  for (const auto& [file, expected] : manifest) {
    CAPTURE(file);
    NamedArrays list = load_params(kDir + file);
    REQUIRE(list.arrays.size() == expected.size());
    bool named = !expected.empty() && expected[0].name != "-";
    CHECK(list.names.size() == (named ? expected.size() : 0));
    for (size_t i = 0; i < expected.size(); ++i) {
      const Expected& e = expected[i];
      CAPTURE(e.name);
      if (named) CHECK(list.names[i] == e.name);
      const NDArray& a = list.arrays[i];
      CHECK(a.is_none() == e.none);
      if (e.none) continue;
      CHECK(a.dtype() == e.dtype);
      CHECK(a.shape() == e.shape);
      CHECK(values_of(a) == e.values);
    }
  }
}

TEST_CASE("saving what was loaded reproduces MXNet's bytes exactly") {
  for (const char* file : {"dtypes.params", "list.params", "empty.params", "checkpoint-0001.params",
                           "large.params", "npshape.params", "none_handmade.params"}) {
    CAPTURE(file);
    NamedArrays list = load_params(kDir + file);
    std::ostringstream out;
    write_params(out, list);
    CHECK(out.str() == read_bytes(kDir + file));
  }
}

TEST_CASE("save/load round trip through a file, and lookup by name") {
  NamedArrays list;
  list.names = {"arg:w", "aux:mean", "arg:steps"};
  list.arrays = {NDArray::from_vector<float>({2, 2}, {1, 2, 3, 4}),
                 NDArray::from_vector<double>({3}, {0.5, -0.25, 1e-300}),
                 NDArray::from_vector<int64_t>({1}, {int64_t{1} << 50})};
  const std::string path = "test_params_roundtrip.params";
  save_params(path, list);
  NamedArrays back = load_params(path);
  CHECK(back.names == list.names);
  CHECK(back.get("arg:w").to_vector<float>() == std::vector<float>{1, 2, 3, 4});
  CHECK(back.get("aux:mean").to_vector<double>() == std::vector<double>{0.5, -0.25, 1e-300});
  CHECK(back.get("arg:steps").to_vector<int64_t>()[0] == int64_t{1} << 50);
  CHECK_THROWS_WITH_AS(back.get("arg:ww"), "no array named 'arg:ww' (did you mean 'arg:w'?)",
                       Error);
  std::remove(path.c_str());

  // A 0-d array needs numpy shape semantics: the file switches to the V3 magic.
  NamedArrays scalar;
  scalar.arrays = {NDArray::from_vector<float>(Shape::scalar(), {3.5f})};
  std::ostringstream out;
  write_params(out, scalar);
  uint32_t magic = 0;
  std::memcpy(&magic, out.str().data() + 24, 4);
  CHECK(magic == 0xF993faca);
  CHECK(parse(out.str()).arrays[0].scalar() == 3.5);
}

TEST_CASE(
    "a file that is not .params, truncated or corrupted gives a clear error with the offset") {
  const std::string good = small_file();
  CHECK(parse(good).get("w").to_vector<float>() == std::vector<float>{1.5f, -2.0f});

  CHECK(error_of("") ==
        "test.params: byte 0: file ends while reading the file magic (8 bytes needed, 0 left); "
        "the file is truncated or not a .params file");
  CHECK(
      error_of("PK\x03\x04 this is a zip file") ==
      "test.params: byte 0: not an MXNet .params file (magic 0x6968742004034b50, expected 0x112)");
  // Every truncation of a valid file fails cleanly.
  for (size_t n = 0; n < good.size(); ++n) {
    CAPTURE(n);
    CHECK_THROWS_AS(parse(good.substr(0, n)), InputError);
  }
  CHECK(error_of(good + "xx") == "test.params: byte 81: 2 unexpected bytes after the last name");

  auto patched = [&](size_t offset, auto value) {
    std::string s = good;
    std::memcpy(s.data() + offset, &value, sizeof value);
    return error_of(s);
  };
  CHECK(patched(24, uint32_t{0xdeadbeef}) ==
        "test.params: byte 24: array 0: unknown array magic 0xdeadbeef (expected 0xf993fac9, "
        "0xf993faca or 0xf993fac8)");
  CHECK(patched(28, int32_t{1}) ==
        "test.params: byte 28: array 0: storage type 1 (sparse) is not supported; only dense "
        "arrays (0) are");
  CHECK(patched(32, int32_t{1000000}) ==
        "test.params: byte 32: array 0: ndim 1000000 is outside [0, 16]");
  CHECK(patched(32, int32_t{-5}) == "test.params: byte 32: array 0: ndim -5 is outside [0, 16]");
  CHECK(patched(36, int64_t{-3}) == "test.params: byte 24: array 0: negative dimension in (-3,)");
  CHECK(patched(36, int64_t{1} << 40) ==
        "test.params: byte 56: array 0: shape (1099511627776,) of float32 needs 4398046511104 "
        "bytes, but only 25 are left in the file");
  CHECK(patched(36, int64_t{1} << 62) ==
        "test.params: byte 56: array 0: shape (4611686018427387904,) of float32 needs more than "
        "18446744073709551615 bytes, but only 25 are left in the file");
  CHECK(patched(44, int32_t{9}) ==
        "test.params: byte 44: array 0: device type 9 is not cpu (1), gpu (2) or cpu_pinned (3)");
  CHECK(patched(52, int32_t{7}) ==
        "test.params: byte 52: array 0: type flag 7 is not one of 0..6 or 12 (float32, float64, "
        "float16, uint8, int32, int8, int64, bfloat16)");
  CHECK(patched(16, uint64_t{1} << 60) ==
        "test.params: byte 16: array count 1152921504606846976 cannot fit in the 57 bytes that "
        "follow");
  CHECK(patched(64, uint64_t{3}) == "test.params: byte 64: 3 names for 1 arrays (expected 0 or 1)");
  CHECK(patched(72, uint64_t{1} << 50) ==
        "test.params: byte 72: name 0 is 1125899906842624 bytes long, but only 1 are left in the "
        "file");
}

TEST_CASE("bytes in memory read as the same file does, truncation named by the source") {
  const std::string good = small_file();
  NamedArrays list = read_params(std::span<const char>(good), "param bytes");
  CHECK(list.names == std::vector<std::string>{"w"});
  CHECK(list.get("w").to_vector<float>() == std::vector<float>{1.5f, -2.0f});
  try {
    read_params(std::span<const char>(good.data(), 40), "param bytes");
    FAIL("a truncated buffer was read");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).rfind("param bytes: byte 36: ", 0) == 0);
  }
}

TEST_CASE("loading a missing file is an input error naming it") {
  CHECK_THROWS_WITH_AS(load_params("no-such-file.params"),
                       "cannot open 'no-such-file.params': no such file", InputError);
}

TEST_CASE("names and arrays must agree when saving") {
  NamedArrays bad;
  bad.names = {"a", "b"};
  bad.arrays = {NDArray::zeros({1})};
  std::ostringstream out;
  CHECK_THROWS_AS(write_params(out, bad), Error);
}

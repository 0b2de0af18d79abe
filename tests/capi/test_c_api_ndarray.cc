// The C API's general and NDArray functions: good paths and every error.
#include <cstdint>
#include <thread>

#include "c_api_test_util.h"
#include "temp_dir.h"

using namespace mx::test;

TEST_CASE("C API: version, seed, shutdown") {
  int version = 0;
  MX_OK(MXGetVersion(&version));
  CHECK(version == 10901);
  CHECK(failure(MXGetVersion(nullptr)) == "MXGetVersion: out is NULL");
  MX_OK(MXRandomSeed(42));
  MX_OK(MXNotifyShutdown());
}

TEST_CASE("C API: create, copy in and out, shape, type, device") {
  const mx_uint shape[] = {2, 3};
  Nd a;
  MX_OK(MXNDArrayCreateEx(shape, 2, 1, 0, 0, 1 /* float64 */, a.out()));
  const std::vector<double> values{1, 2, 3, 4, 5, 6};
  MX_OK(MXNDArraySyncCopyFromCPU(a.get(), values.data(), 6));
  std::vector<double> back(6);
  MX_OK(MXNDArraySyncCopyToCPU(a.get(), back.data(), 6));
  CHECK(back == values);
  int dtype = -1, dev_type = 0, dev_id = -1;
  MX_OK(MXNDArrayGetDType(a.get(), &dtype));
  CHECK(dtype == 1);
  MX_OK(MXNDArrayGetContext(a.get(), &dev_type, &dev_id));
  CHECK(dev_type == 1);
  CHECK(dev_id == 0);
  CHECK(shape_of(a.get()) == std::vector<mx_uint>{2, 3});
  int ndim = 0;
  const int* dims = nullptr;
  MX_OK(MXNDArrayGetShapeEx(a.get(), &ndim, &dims));
  CHECK(std::vector<int>(dims, dims + ndim) == std::vector<int>{2, 3});
  MX_OK(MXNDArrayWaitToRead(a.get()));
  MX_OK(MXNDArrayWaitToWrite(a.get()));
  MX_OK(MXNDArrayWaitAll());

  Nd f;  // MXNDArrayCreate is float32
  MX_OK(MXNDArrayCreate(shape, 2, 1, 0, 1, f.out()));
  MX_OK(MXNDArrayGetDType(f.get(), &dtype));
  CHECK(dtype == 0);
}

TEST_CASE("C API: none arrays") {
  Nd none;
  MX_OK(MXNDArrayCreateNone(none.out()));
  CHECK(shape_of(none.get()).empty());
  int ndim = 0;
  const int* dims = nullptr;
  MX_OK(MXNDArrayGetShapeEx(none.get(), &ndim, &dims));
  CHECK(ndim == -1);
  float x = 0;
  CHECK(failure(MXNDArraySyncCopyToCPU(none.get(), &x, 1)) ==
        "MXNDArraySyncCopyToCPU: the array is none (it has no shape and no memory)");
  MX_OK(MXNDArrayWaitToRead(none.get()));
  MX_OK(MXNDArrayWaitToWrite(none.get()));
}

TEST_CASE("C API: NDArray errors") {
  const mx_uint shape[] = {2, 2};
  NDArrayHandle h = nullptr;
  CHECK(failure(MXNDArrayCreateEx(shape, 2, 1, 0, 0, 9, &h)) ==
        "MXNDArrayCreateEx: dtype 9 is not a type flag (0 float32, 1 float64, 2 float16, "
        "3 uint8, 4 int32, 5 int8, 6 int64)");
  CHECK(failure(MXNDArrayCreateEx(shape, 2, 7, 0, 0, 0, &h)) ==
        "MXNDArrayCreateEx: dev_type 7 is not 1 (cpu), 2 (gpu) or 3 (cpu_pinned)");
  CHECK(failure(MXNDArrayCreate(shape, 2, 1, -1, 0, &h)) ==
        "MXNDArrayCreate: dev_id -1 is negative");
  CHECK(failure(MXNDArrayCreate(nullptr, 2, 1, 0, 0, &h)) == "MXNDArrayCreate: shape is NULL");
  CHECK(failure(MXNDArrayCreate(shape, 2, 1, 0, 0, nullptr)) == "MXNDArrayCreate: out is NULL");
  CHECK(failure(MXNDArrayCreateNone(nullptr)) == "MXNDArrayCreateNone: out is NULL");
  CHECK(h == nullptr);  // nothing written by failed calls

  Nd a = make_array({2, 2}, {1, 2, 3, 4});
  float buf[5] = {};
  CHECK(failure(MXNDArraySyncCopyFromCPU(a.get(), buf, 5)) ==
        "MXNDArraySyncCopyFromCPU: size 5 differs from the array's 4 elements (float32 (2, 2) "
        "on cpu:0)");
  CHECK(failure(MXNDArraySyncCopyToCPU(a.get(), buf, 3)) ==
        "MXNDArraySyncCopyToCPU: size 3 differs from the array's 4 elements (float32 (2, 2) on "
        "cpu:0)");
  CHECK(failure(MXNDArraySyncCopyToCPU(a.get(), nullptr, 4)) ==
        "MXNDArraySyncCopyToCPU: data is NULL");
  CHECK(failure(MXNDArraySyncCopyFromCPU(nullptr, buf, 4)) ==
        "MXNDArraySyncCopyFromCPU: handle is NULL");
  CHECK(failure(MXNDArrayWaitToRead(nullptr)) == "MXNDArrayWaitToRead: handle is NULL");
  CHECK(failure(MXNDArrayWaitToWrite(nullptr)) == "MXNDArrayWaitToWrite: handle is NULL");
  mx_uint ndim = 0;
  const mx_uint* dims = nullptr;
  CHECK(failure(MXNDArrayGetShape(a.get(), nullptr, &dims)) ==
        "MXNDArrayGetShape: out_dim or out_pdata is NULL");
  int idim = 0;
  const int* idims = nullptr;
  CHECK(failure(MXNDArrayGetShapeEx(nullptr, &idim, &idims)) ==
        "MXNDArrayGetShapeEx: handle is NULL");
  CHECK(failure(MXNDArrayGetShape(nullptr, &ndim, &dims)) == "MXNDArrayGetShape: handle is NULL");
  CHECK(failure(MXNDArrayGetDType(a.get(), nullptr)) == "MXNDArrayGetDType: out_dtype is NULL");
  int t = 0;
  CHECK(failure(MXNDArrayGetContext(a.get(), &t, nullptr)) ==
        "MXNDArrayGetContext: out_dev_type or out_dev_id is NULL");

  // A handle of another kind is refused, not misread.
  SymbolHandle sym = nullptr;
  MX_OK(MXSymbolCreateVariable("x", &sym));
  CHECK(failure(MXNDArrayGetDType(sym, &t)) ==
        "MXNDArrayGetDType: handle is a Symbol handle, not an NDArray handle");
  CHECK(failure(MXNDArrayFree(sym)) ==
        "MXNDArrayFree: handle is a Symbol handle, not an NDArray handle");
  MX_OK(MXSymbolFree(sym));
  MX_OK(MXNDArrayFree(nullptr));
}

TEST_CASE("C API: views share memory") {
  Nd a = make_array({3, 2}, {1, 2, 3, 4, 5, 6});
  Nd rows, row, flat;
  MX_OK(MXNDArraySlice(a.get(), 1, 3, rows.out()));
  CHECK(read(rows.get()) == std::vector<float>{3, 4, 5, 6});
  MX_OK(MXNDArrayAt(a.get(), 2, row.out()));
  CHECK(shape_of(row.get()) == std::vector<mx_uint>{2});
  CHECK(read(row.get()) == std::vector<float>{5, 6});
  int dims[] = {-1};
  MX_OK(MXNDArrayReshape(a.get(), 1, dims, flat.out()));
  CHECK(shape_of(flat.get()) == std::vector<mx_uint>{6});
  const float nine[] = {9, 9};
  MX_OK(MXNDArraySyncCopyFromCPU(row.get(), nine, 2));
  CHECK(read(a.get()) == std::vector<float>{1, 2, 3, 4, 9, 9});

  NDArrayHandle h = nullptr;
  CHECK(failure(MXNDArraySlice(a.get(), 2, 5, &h)) ==
        "MXNDArraySlice: slice [2, 5) is outside [0, 3) of the first axis of shape (3, 2)");
  CHECK(failure(MXNDArrayAt(a.get(), 3, &h)) ==
        "MXNDArrayAt: slice [3, 4) is outside [0, 3) of the first axis of shape (3, 2)");
  int bad[] = {4};
  CHECK(failure(MXNDArrayReshape(a.get(), 1, bad, &h)) ==
        "MXNDArrayReshape: cannot reshape (3, 2) (6 elements) to (4,)");
  CHECK(failure(MXNDArrayReshape(a.get(), 1, nullptr, &h)) == "MXNDArrayReshape: dims is NULL");
  CHECK(failure(MXNDArraySlice(a.get(), 0, 1, nullptr)) == "MXNDArraySlice: out is NULL");
  CHECK(h == nullptr);
}

TEST_CASE("C API: save and load .params") {
  TempDir dir("c_api_params");
  Nd a = make_array({2}, {1, 2}), b = make_array({1, 3}, {3, 4, 5});
  NDArrayHandle list[] = {a.get(), b.get()};
  const char* keys[] = {"arg:a", "aux:b"};
  const std::string path = dir.file("x.params");
  MX_OK(MXNDArraySave(path.c_str(), 2, list, keys));
  mx_uint n = 0, names_n = 0;
  NDArrayHandle* arrays = nullptr;
  const char** names = nullptr;
  MX_OK(MXNDArrayLoad(path.c_str(), &n, &arrays, &names_n, &names));
  REQUIRE(n == 2);
  REQUIRE(names_n == 2);
  Nd a2(arrays[0]), b2(arrays[1]);
  CHECK(std::string(names[0]) == "arg:a");
  CHECK(std::string(names[1]) == "aux:b");
  CHECK(read(a2.get()) == std::vector<float>{1, 2});
  CHECK(shape_of(b2.get()) == std::vector<mx_uint>{1, 3});
  // Unnamed lists.
  MX_OK(MXNDArraySave(path.c_str(), 2, list, nullptr));
  MX_OK(MXNDArrayLoad(path.c_str(), &n, &arrays, &names_n, &names));
  Nd a3(arrays[0]), b3(arrays[1]);
  CHECK(names_n == 0);

  Nd none;
  MX_OK(MXNDArrayCreateNone(none.out()));
  NDArrayHandle with_none[] = {a.get(), none.get()};
  CHECK(failure(MXNDArraySave(path.c_str(), 2, with_none, nullptr)) ==
        "MXNDArraySave: args[1] is none");
  NDArrayHandle with_null[] = {a.get(), nullptr};
  CHECK(failure(MXNDArraySave(path.c_str(), 2, with_null, nullptr)) ==
        "MXNDArraySave: args[1] is NULL");
  CHECK(failure(MXNDArraySave(nullptr, 2, list, nullptr)) == "MXNDArraySave: fname is NULL");
  const std::string missing = dir.file("missing.params");
  CHECK(failure(MXNDArrayLoad(missing.c_str(), &n, &arrays, &names_n, &names)) ==
        "MXNDArrayLoad: cannot open '" + missing + "': no such file");
  CHECK(failure(MXNDArrayLoad(path.c_str(), nullptr, &arrays, &names_n, &names)) ==
        "MXNDArrayLoad: an output pointer is NULL");
}

TEST_CASE("C API: shapes returned are per thread") {
  Nd a = make_array({2, 3}, {1, 2, 3, 4, 5, 6});
  mx_uint ndim = 0;
  const mx_uint* dims = nullptr;
  MX_OK(MXNDArrayGetShape(a.get(), &ndim, &dims));
  std::thread other([] {
    Nd b = make_array({7}, {1, 2, 3, 4, 5, 6, 7});
    CHECK(shape_of(b.get()) == std::vector<mx_uint>{7});
  });
  other.join();
  CHECK(std::vector<mx_uint>(dims, dims + ndim) == std::vector<mx_uint>{2, 3});
}

// The C API's KVStore (local and device stores; the dist stores run under
// mpirun in c_api_dist_worker.c) and data iterator functions.
#include <algorithm>
#include <fstream>

#include "c_api_test_util.h"
#include "temp_dir.h"

using namespace mx::test;

namespace {

class Store {
 public:
  explicit Store(const char* type) { MX_OK(MXKVStoreCreate(type, &h_)); }
  ~Store() { MXKVStoreFree(h_); }
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;
  KVStoreHandle get() const { return h_; }

 private:
  KVStoreHandle h_ = nullptr;
};

}  // namespace

TEST_CASE("C API: local KVStore: init, push (summed), pull, optimizer, rank") {
  for (const char* type : {"local", "device"}) {
    INFO(type);
    Store kv(type);
    const char* got_type = nullptr;
    MX_OK(MXKVStoreGetType(kv.get(), &got_type));
    CHECK(std::string(got_type) == type);
    int rank = -1, size = 0;
    MX_OK(MXKVStoreGetRank(kv.get(), &rank));
    MX_OK(MXKVStoreGetGroupSize(kv.get(), &size));
    CHECK(rank == 0);
    CHECK(size == 1);
    MX_OK(MXKVStoreBarrier(kv.get()));

    Nd w = make_array({3}, {1, 2, 3}), g1 = make_array({3}, {1, 1, 1}),
       g2 = make_array({3}, {2, 2, 2}), out = make_array({3}, {0, 0, 0});
    const int keys[] = {7, 7};
    NDArrayHandle init_vals[] = {w.get()};
    MX_OK(MXKVStoreInit(kv.get(), 1, keys, init_vals));
    NDArrayHandle outs[] = {out.get()};
    MX_OK(MXKVStorePull(kv.get(), 1, keys, outs, 0));
    CHECK(read(out.get()) == std::vector<float>{1, 2, 3});
    // Two values of one key are summed; without an optimizer the sum is stored.
    NDArrayHandle grads[] = {g1.get(), g2.get()};
    MX_OK(MXKVStorePush(kv.get(), 2, keys, grads, 0));
    MX_OK(MXKVStorePull(kv.get(), 1, keys, outs, 0));
    CHECK(read(out.get()) == std::vector<float>{3, 3, 3});
    // With SGD the pushed sum updates the stored value: 3 - 0.5 * 3.
    const char* opt_keys[] = {"learning_rate", "wd"};
    const char* opt_vals[] = {"0.5", "0"};
    MX_OK(MXKVStoreSetOptimizer(kv.get(), "sgd", 2, opt_keys, opt_vals));
    MX_OK(MXKVStorePush(kv.get(), 2, keys, grads, 0));
    Nd out2 = make_array({3}, {0, 0, 0});
    NDArrayHandle two_outs[] = {out.get(), out2.get()};
    MX_OK(MXKVStorePull(kv.get(), 2, keys, two_outs, 0));
    CHECK(read(out.get()) == std::vector<float>{1.5f, 1.5f, 1.5f});
    CHECK(read(out2.get()) == std::vector<float>{1.5f, 1.5f, 1.5f});
  }
  int role = -1;
  MX_OK(MXKVStoreIsWorkerNode(&role));
  CHECK(role == 1);
  MX_OK(MXKVStoreIsServerNode(&role));
  CHECK(role == 0);
  MX_OK(MXKVStoreIsSchedulerNode(&role));
  CHECK(role == 0);
}

TEST_CASE("C API: KVStore errors") {
  KVStoreHandle h = nullptr;
  CHECK(failure(MXKVStoreCreate("locl", &h)) ==
        "MXKVStoreCreate: kvstore: parameter 'type': 'locl' is not one of {'local', 'device', "
        "'dist_sync', 'dist_async'} (did you mean 'local'?)");
  CHECK(failure(MXKVStoreCreate(nullptr, &h)) == "MXKVStoreCreate: type is NULL");
  CHECK(h == nullptr);
  Store kv("local");
  Nd w = make_array({3}, {1, 2, 3}), small = make_array({2}, {0, 0});
  const int keys[] = {1, 1};
  NDArrayHandle vals[] = {w.get(), w.get()};
  CHECK(failure(MXKVStoreInit(kv.get(), 2, keys, vals)) ==
        "MXKVStoreInit: key 1 is given 2 times; init takes one value per key");
  CHECK(failure(MXKVStorePush(kv.get(), 1, keys, vals, 0)) ==
        "MXKVStorePush: kvstore: key 1 was not initialized (call init first)");
  MX_OK(MXKVStoreInit(kv.get(), 1, keys, vals));
  NDArrayHandle wrong[] = {small.get()};
  CHECK(failure(MXKVStorePull(kv.get(), 1, keys, wrong, 0)) ==
        "MXKVStorePull: kvstore: key 1: output array float32 (2,) on cpu:0 does not match the "
        "key's float32 (3,)");
  CHECK(failure(MXKVStorePush(kv.get(), 1, nullptr, vals, 0)) == "MXKVStorePush: keys is NULL");
  NDArrayHandle null_val[] = {nullptr};
  CHECK(failure(MXKVStorePush(kv.get(), 1, keys, null_val, 0)) == "MXKVStorePush: vals[0] is NULL");
  CHECK(failure(MXKVStoreSetOptimizer(kv.get(), "sdg", 0, nullptr, nullptr)) ==
        "MXKVStoreSetOptimizer: unknown optimizer 'sdg' (did you mean 'sgd'?); optimizers are: "
        "sgd, nag, adam, adamw, rmsprop, adagrad");
  const char* bad_keys[] = {"learning_rat"};
  const char* bad_vals[] = {"0.1"};
  CHECK(failure(MXKVStoreSetOptimizer(kv.get(), "sgd", 1, bad_keys, bad_vals)) ==
        "MXKVStoreSetOptimizer: optimizer 'sgd': unknown parameter 'learning_rat' (did you mean "
        "'learning_rate'?); parameters are: learning_rate, wd, rescale_grad, clip_gradient, "
        "begin_num_update, momentum, lazy_update");
  int r = 0;
  CHECK(failure(MXKVStoreGetRank(kv.get(), nullptr)) == "MXKVStoreGetRank: ret is NULL");
  CHECK(failure(MXKVStoreGetGroupSize(nullptr, &r)) == "MXKVStoreGetGroupSize: handle is NULL");
  CHECK(failure(MXKVStoreBarrier(w.get())) ==
        "MXKVStoreBarrier: handle is an NDArray handle, not a KVStore handle");
  CHECK(failure(MXKVStoreGetType(kv.get(), nullptr)) == "MXKVStoreGetType: type is NULL");
  CHECK(failure(MXKVStoreIsWorkerNode(nullptr)) == "MXKVStoreIsWorkerNode: ret is NULL");
  MX_OK(MXKVStoreFree(nullptr));
}

namespace {

class Iter {
 public:
  Iter() = default;
  ~Iter() { MXDataIterFree(h_); }
  Iter(const Iter&) = delete;
  Iter& operator=(const Iter&) = delete;
  DataIterHandle get() const { return h_; }
  DataIterHandle* out() { return &h_; }

 private:
  DataIterHandle h_ = nullptr;
};

DataIterCreator creator(const std::string& name) {
  mx_uint n = 0;
  DataIterCreator* all = nullptr;
  MX_OK(MXListDataIters(&n, &all));
  for (mx_uint i = 0; i < n; ++i) {
    const char *iter_name, *description;
    mx_uint num_args;
    const char **names, **types, **descriptions;
    MX_OK(MXDataIterGetIterInfo(all[i], &iter_name, &description, &num_args, &names, &types,
                                &descriptions));
    if (name == iter_name) return all[i];
  }
  FAIL("no iterator " << name);
  return nullptr;
}

}  // namespace

TEST_CASE("C API: data iterators: list, info, CSVIter batches, epochs") {
  mx_uint n = 0;
  DataIterCreator* all = nullptr;
  MX_OK(MXListDataIters(&n, &all));
  std::vector<std::string> names;
  for (mx_uint i = 0; i < n; ++i) {
    const char *name, *description;
    mx_uint num_args;
    const char **arg_names, **types, **descriptions;
    MX_OK(MXDataIterGetIterInfo(all[i], &name, &description, &num_args, &arg_names, &types,
                                &descriptions));
    names.push_back(name);
    CHECK(std::string(description) != "");
    CHECK(num_args > 2);
    if (names.back() == "MNISTIter") {
      std::vector<std::string> args(arg_names, arg_names + num_args);
      auto it = std::find(args.begin(), args.end(), "batch_size");
      REQUIRE(it != args.end());
      CHECK(std::string(types[it - args.begin()]).rfind("int", 0) == 0);
    }
  }
  CHECK(names == std::vector<std::string>{"ImageRecordIter", "MNISTIter", "CSVIter",
                                         "SyntheticIter", "TextIter"});

  TempDir dir("c_api_iter");
  const std::string data = dir.file("data.csv"), label = dir.file("label.csv");
  std::ofstream(data) << "1,2\n3,4\n5,6\n";
  std::ofstream(label) << "0\n1\n2\n";
  const char* keys[] = {"data_csv", "label_csv", "data_shape", "batch_size", "round_batch"};
  const char* vals[] = {data.c_str(), label.c_str(), "(2,)", "2", "False"};
  Iter it;
  MX_OK(MXDataIterCreateIter(creator("CSVIter"), 5, keys, vals, it.out()));
  int more = 0, pad = -1;
  for (int epoch = 0; epoch < 2; ++epoch) {
    MX_OK(MXDataIterNext(it.get(), &more));
    CHECK(more == 1);
    Nd d, l;
    MX_OK(MXDataIterGetData(it.get(), d.out()));
    MX_OK(MXDataIterGetLabel(it.get(), l.out()));
    CHECK(read(d.get()) == std::vector<float>{1, 2, 3, 4});
    CHECK(read(l.get()) == std::vector<float>{0, 1});
    MX_OK(MXDataIterGetPadNum(it.get(), &pad));
    CHECK(pad == 0);
    MX_OK(MXDataIterNext(it.get(), &more));
    CHECK(more == 1);
    MX_OK(MXDataIterGetPadNum(it.get(), &pad));
    CHECK(pad == 1);  // the last batch is padded with zeros
    uint64_t* index = nullptr;
    uint64_t count = 0;
    MX_OK(MXDataIterGetIndex(it.get(), &index, &count));
    REQUIRE(count == 2);
    CHECK(index[0] == 2);
    Nd last;
    MX_OK(MXDataIterGetData(it.get(), last.out()));
    CHECK(read(last.get()) == std::vector<float>{5, 6, 0, 0});
    MX_OK(MXDataIterNext(it.get(), &more));
    CHECK(more == 0);
    MX_OK(MXDataIterBeforeFirst(it.get()));
  }
}

TEST_CASE("C API: data iterator errors") {
  DataIterHandle h = nullptr;
  const char* keys[] = {"image", "label", "batch_size"};
  const char* vals[] = {"/nonexistent/images", "/nonexistent/labels", "10"};
  CHECK(failure(MXDataIterCreateIter(creator("MNISTIter"), 3, keys, vals, &h)) ==
        "MXDataIterCreateIter: cannot open '/nonexistent/images': no such file");
  const char* typo[] = {"batch_sise"};
  CHECK(failure(MXDataIterCreateIter(creator("MNISTIter"), 1, typo, vals, &h)) ==
        "MXDataIterCreateIter: data MNISTIter: unknown parameter 'batch_sise' (did you mean "
        "'batch_size'?); parameters are: image, label, batch_size, shuffle, flat, seed, silent, "
        "num_parts, part_index, round_batch");
  CHECK(failure(MXDataIterCreateIter(nullptr, 0, nullptr, nullptr, &h)) ==
        "MXDataIterCreateIter: the iterator type (creator) is NULL");
  int not_a_creator = 0;
  CHECK(failure(MXDataIterCreateIter(&not_a_creator, 0, nullptr, nullptr, &h)) ==
        "MXDataIterCreateIter: the iterator type is not one of MXListDataIters's");
  CHECK(h == nullptr);

  TempDir dir("c_api_iter_errors");
  const std::string data = dir.file("data.csv");
  std::ofstream(data) << "1,2\n";
  const char* ckeys[] = {"data_csv", "data_shape", "batch_size"};
  const char* cvals[] = {data.c_str(), "(2,)", "1"};
  Iter it;
  MX_OK(MXDataIterCreateIter(creator("CSVIter"), 3, ckeys, cvals, it.out()));
  NDArrayHandle a = nullptr;
  CHECK(failure(MXDataIterGetData(it.get(), &a)) ==
        "MXDataIterGetData: there is no current batch: call MXDataIterNext first (and check that "
        "it gave 1)");
  int pad = 0;
  CHECK(failure(MXDataIterGetPadNum(it.get(), &pad)).rfind("MXDataIterGetPadNum: there is no", 0) ==
        0);
  CHECK(failure(MXDataIterNext(it.get(), nullptr)) == "MXDataIterNext: out is NULL");
  CHECK(failure(MXDataIterGetLabel(nullptr, &a)) == "MXDataIterGetLabel: handle is NULL");
  uint64_t* index = nullptr;
  CHECK(failure(MXDataIterGetIndex(it.get(), &index, nullptr)) ==
        "MXDataIterGetIndex: out_index or out_size is NULL");
  CHECK(failure(MXListDataIters(nullptr, nullptr)) ==
        "MXListDataIters: out_size or out_array is NULL");
  CHECK(failure(MXDataIterBeforeFirst(nullptr)) == "MXDataIterBeforeFirst: handle is NULL");
  MX_OK(MXDataIterFree(nullptr));
}

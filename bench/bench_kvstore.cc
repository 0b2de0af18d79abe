// KVStore throughput against raw MPI in the same run: for keys of 4 KiB to
// 64 MiB (float32), the time of a push + pull of one key through a server
// (dist_sync, one worker, no optimizer: the pushed value is stored and
// pulled back) next to an MPI ping-pong of the same size each way (the same
// traffic) and an osu_bw-style window of sends (one way, the link's peak).
// Raw MPI runs before and after the kvstore, the kvstore three passes; each
// figure is the best, so a busy moment of a shared machine does not decide it.
//
// Rounds of small keys (up to 64 KiB): 16 keys of a size pushed in one call
// and pulled in one call (packed: one message per round each way), against
// the same 16 keys pushed and pulled one call per key (each key its own
// message, as before packing) and against raw MPI moving the same 16
// messages each way per round (16 non-blocking sends, then 16 back).
// LeNet's parameters are pushed and pulled one call per key (as mx-train did
// before packing) and with the small keys in one call (as mx-train does).
//
//   mpirun -np 1 bench_kvstore --server : -np 1 bench_kvstore
// (--min-kib K / --max-mib M, default 4 and 64, given to both ranks, pick the
// sizes; --pack-threshold BYTES to the worker sets kvstore.pack_threshold)
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "kvstore/dist_coordinator.h"
#include "kvstore/kv_server.h"

using namespace mx;
using namespace mx::kvstore;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Repetitions for a size: about 512 MiB of traffic, at least 5.
int repeats(size_t bytes) { return std::max(5, static_cast<int>((size_t{512} << 20) / bytes)); }

// Ping-pong: `bytes` to the peer and back; returns GB/s of both directions.
double ping_pong(int me, int peer, size_t bytes, std::vector<char>& buf) {
  const int n = repeats(bytes);
  const int count = static_cast<int>(bytes);
  MPI_Barrier(MPI_COMM_WORLD);
  const auto start = Clock::now();
  for (int i = 0; i < n; ++i) {
    if (me < peer) {
      MPI_Send(buf.data(), count, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
      MPI_Recv(buf.data(), count, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf.data(), count, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf.data(), count, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
    }
  }
  const double s = seconds_since(start);
  return 2.0 * static_cast<double>(bytes) * n / s / 1e9;
}

// osu_bw: a window of 16 sends, then a one-byte acknowledgement; GB/s one way.
double window(int me, int peer, size_t bytes, std::vector<char>& buf) {
  constexpr int kWindow = 16;
  const int n = std::max(2, repeats(bytes) / kWindow);
  const int count = static_cast<int>(bytes);
  std::vector<MPI_Request> req(kWindow);
  char ack = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  const auto start = Clock::now();
  for (int i = 0; i < n; ++i) {
    for (int w = 0; w < kWindow; ++w) {
      if (me > peer)
        MPI_Isend(buf.data(), count, MPI_BYTE, peer, 2, MPI_COMM_WORLD,
                  &req[static_cast<size_t>(w)]);
      else
        MPI_Irecv(buf.data(), count, MPI_BYTE, peer, 2, MPI_COMM_WORLD,
                  &req[static_cast<size_t>(w)]);
    }
    MPI_Waitall(kWindow, req.data(), MPI_STATUSES_IGNORE);
    if (me > peer)
      MPI_Recv(&ack, 1, MPI_BYTE, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    else
      MPI_Send(&ack, 1, MPI_BYTE, peer, 3, MPI_COMM_WORLD);
  }
  const double s = seconds_since(start);
  return static_cast<double>(bytes) * kWindow * n / s / 1e9;
}

// A round of `keys` messages of `bytes` to the peer, then as many back;
// returns GB/s of both directions.
double raw_round(int me, int peer, size_t bytes, int keys, std::vector<char>& buf) {
  const int n = repeats(bytes * static_cast<size_t>(keys));
  const int count = static_cast<int>(bytes);
  std::vector<MPI_Request> req(static_cast<size_t>(keys));
  MPI_Barrier(MPI_COMM_WORLD);
  const auto start = Clock::now();
  for (int i = 0; i < n; ++i)
    for (int dir = 0; dir < 2; ++dir) {
      const bool sending = (me < peer) == (dir == 0);
      for (int k = 0; k < keys; ++k) {
        char* at = buf.data() + static_cast<size_t>(k) * bytes;
        if (sending)
          MPI_Isend(at, count, MPI_BYTE, peer, 4, MPI_COMM_WORLD, &req[static_cast<size_t>(k)]);
        else
          MPI_Irecv(at, count, MPI_BYTE, peer, 4, MPI_COMM_WORLD, &req[static_cast<size_t>(k)]);
      }
      MPI_Waitall(keys, req.data(), MPI_STATUSES_IGNORE);
    }
  const double s = seconds_since(start);
  return 2.0 * static_cast<double>(bytes) * keys * n / s / 1e9;
}

constexpr int kRoundKeys = 16;
constexpr size_t kMaxRoundBytes = 64 << 10;

// Push + pull of `keys` (values and outputs alike), `n` times: in one call
// each (`together`) or one call per key. GB/s of both directions.
double kv_round(DistKVStore& kv, const std::vector<int>& keys,
                const std::vector<std::vector<NDArray>>& grads,
                const std::vector<std::vector<NDArray>>& outs, size_t bytes, bool together) {
  auto once = [&] {
    if (together) {
      kv.pushpull(keys, grads, outs);
      return;
    }
    for (size_t k = 0; k < keys.size(); ++k) kv.pushpull({keys[k]}, {grads[k]}, {outs[k]});
  };
  const int n = repeats(bytes * keys.size());
  for (int w = 0; w < 2; ++w) once();
  for (const auto& o : outs) o[0].wait_to_read();
  const auto start = Clock::now();
  for (int r = 0; r < n; ++r) once();
  for (const auto& o : outs) o[0].wait_to_read();
  return 2.0 * static_cast<double>(bytes) * static_cast<double>(keys.size()) * n /
         seconds_since(start) / 1e9;
}

// Rounds of kRoundKeys keys per small size: packed and key by key, best of 3.
void measure_rounds(DistCoordinator& job, const std::vector<size_t>& sizes,
                    std::vector<double>& packed, std::vector<double>& single) {
  DistKVStore& kv = job.store();
  for (size_t i = 0; i < sizes.size() && sizes[i] <= kMaxRoundBytes; ++i) {
    std::vector<int> keys;
    std::vector<NDArray> init;
    std::vector<std::vector<NDArray>> grads, outs;
    const Shape shape{static_cast<int64_t>(sizes[i] / 4)};
    for (int k = 0; k < kRoundKeys; ++k) {
      keys.push_back(1000 + static_cast<int>(i) * kRoundKeys + k);
      init.push_back(NDArray::full(shape, 1.0));
      grads.push_back({NDArray::full(shape, 2.0 + k)});
      outs.push_back({NDArray::zeros(shape)});
    }
    kv.init(keys, init);
    for (int pass = 0; pass < 3; ++pass) {
      packed[i] = std::max(packed[i], kv_round(kv, keys, grads, outs, sizes[i], true));
      single[i] = std::max(single[i], kv_round(kv, keys, grads, outs, sizes[i], false));
    }
    for (int k = 0; k < kRoundKeys; ++k)
      for (float x : outs[static_cast<size_t>(k)][0].to_vector<float>())
        if (x != 2.0f + static_cast<float>(k)) job.abort("bench_kvstore: wrong value pulled");
  }
}

// ms per LeNet step: every key pushed and pulled, last layer first, one
// call per key (`grouped` false) or the small keys in one call at the end.
double lenet_step_ms(DistCoordinator& job, int first_key, bool grouped) {
  DistKVStore& kv = job.store();
  const std::vector<int64_t> lenet = {500, 20, 25000, 50, 400000, 500, 5000, 10};
  std::vector<int> lkeys;
  std::vector<std::vector<NDArray>> lgrads, louts;
  std::vector<NDArray> linit;
  for (size_t i = 0; i < lenet.size(); ++i) {
    lkeys.push_back(first_key + static_cast<int>(i));
    linit.push_back(NDArray::full(Shape{lenet[i]}, 1.0));
    lgrads.push_back({NDArray::full(Shape{lenet[i]}, 2.0)});
    louts.push_back({NDArray::zeros(Shape{lenet[i]})});
  }
  kv.init(lkeys, linit);
  auto step = [&] {
    std::vector<int> small;
    std::vector<std::vector<NDArray>> small_grads, small_outs;
    for (size_t i = lenet.size(); i-- > 0;) {
      if (grouped && kv.packs(lkeys[i])) {
        small.push_back(lkeys[i]);
        small_grads.push_back(lgrads[i]);
        small_outs.push_back(louts[i]);
        continue;
      }
      kv.push({lkeys[i]}, {lgrads[i]}, -static_cast<int>(i));
      kv.pull({lkeys[i]}, {louts[i]}, -static_cast<int>(i));
    }
    if (!small.empty()) kv.pushpull(small, small_grads, small_outs);
    for (auto& o : louts) o[0].wait_to_read();
  };
  for (int w = 0; w < 10; ++w) step();
  double best_ms = 1e30;
  for (int pass = 0; pass < 3; ++pass) {
    const int steps = 200;
    const auto start = Clock::now();
    for (int r = 0; r < steps; ++r) step();
    best_ms = std::min(best_ms, seconds_since(start) * 1e3 / steps);
  }
  return best_ms;
}

}  // namespace

int main(int argc, char** argv) {
  bool server = false;
  int max_mib = 64, min_kib = 4;
  int64_t pack_threshold = kDefaultPackThreshold;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--server")
      server = true;
    else if (a == "--max-mib" && i + 1 < argc)
      max_mib = std::stoi(argv[++i]);
    else if (a == "--min-kib" && i + 1 < argc)
      min_kib = std::stoi(argv[++i]);
    else if (a == "--pack-threshold" && i + 1 < argc)
      pack_threshold = std::stoll(argv[++i]);
  }
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0)
      std::fprintf(stderr, "usage: mpirun -np 1 bench_kvstore --server : -np 1 bench_kvstore\n");
    MPI_Finalize();
    return 2;
  }
  const int peer = 1 - rank;
  std::vector<size_t> sizes;
  for (size_t b = static_cast<size_t>(min_kib) << 10; b <= (static_cast<size_t>(max_mib) << 20);
       b *= 4)
    sizes.push_back(b);

  // Raw MPI in this thread, before and after the kvstore (whose own thread
  // makes the MPI calls in between); each figure is the best of those runs,
  // so a busy moment of a shared machine does not decide it.
  std::vector<double> pp(sizes.size(), 0.0), bw(sizes.size(), 0.0), rr(sizes.size(), 0.0);
  auto measure_raw = [&] {
    std::vector<char> buf(std::max(sizes.back(), kRoundKeys * kMaxRoundBytes), 1);
    for (size_t i = 0; i < sizes.size(); ++i) {
      pp[i] = std::max(pp[i], ping_pong(rank, peer, sizes[i], buf));
      bw[i] = std::max(bw[i], window(rank, peer, sizes[i], buf));
      if (sizes[i] <= kMaxRoundBytes)
        rr[i] = std::max(rr[i], raw_round(rank, peer, sizes[i], kRoundKeys, buf));
    }
  };
  measure_raw();

  std::vector<double> kv_best(sizes.size(), 0.0), packed(sizes.size(), 0.0),
      single(sizes.size(), 0.0);
  double lenet_ms = 0, lenet_grouped_ms = 0;
  int64_t packed_messages = 0;
  if (server) {
    Server s;
    s.run();
  } else {
    DistOptions options;
    options.pack_threshold = pack_threshold;
    DistCoordinator job(options);
    DistKVStore& kv = job.store();
    std::vector<int> keys;
    std::vector<NDArray> values;
    for (size_t i = 0; i < sizes.size(); ++i) {
      keys.push_back(static_cast<int>(i));
      values.push_back(NDArray::full(Shape{static_cast<int64_t>(sizes[i] / 4)}, 1.0));
    }
    kv.init(keys, values);
    for (int pass = 0; pass < 3; ++pass)
      for (size_t i = 0; i < sizes.size(); ++i) {
        NDArray grad = NDArray::full(values[i].shape(), 2.0);
        NDArray out = NDArray::zeros(values[i].shape());
        const int n = repeats(sizes[i]);
        for (int w = 0; w < 2; ++w) kv.pushpull({keys[i]}, {{grad}}, {{out}});
        out.wait_to_read();
        const auto start = Clock::now();
        for (int r = 0; r < n; ++r) kv.pushpull({keys[i]}, {{grad}}, {{out}});
        out.wait_to_read();
        kv_best[i] = std::max(kv_best[i],
                              2.0 * static_cast<double>(sizes[i]) * n / seconds_since(start) / 1e9);
        // The data really moved: a new value comes back in every element.
        grad.fill(static_cast<double>(i) + 3.0);
        kv.pushpull({keys[i]}, {{grad}}, {{out}});
        for (float x : out.to_vector<float>())
          if (x != static_cast<float>(i) + 3.0f) job.abort("bench_kvstore: wrong value pulled");
      }
    measure_rounds(job, sizes, packed, single);
    // One training step's communication for LeNet's parameters (MXNet's
    // LeNet on 28x28 inputs).
    lenet_ms = lenet_step_ms(job, 100, false);
    lenet_grouped_ms = lenet_step_ms(job, 200, true);
    packed_messages = kv.packed_messages();
    job.finish();
  }
  measure_raw();
  if (!server) {
    std::printf("%10s %14s %14s %17s %7s\n", "key bytes", "push+pull GB/s", "ping-pong GB/s",
                "window 1-way GB/s", "kv/pp");
    for (size_t i = 0; i < sizes.size(); ++i)
      std::printf("%10zu %14.2f %14.2f %17.2f %6.0f%%\n", sizes[i], kv_best[i], pp[i], bw[i],
                  100.0 * kv_best[i] / pp[i]);
    std::printf("rounds of %d keys (pack threshold %lld bytes), GB/s:\n", kRoundKeys,
                static_cast<long long>(pack_threshold));
    std::printf("%10s %14s %14s %14s %10s %10s\n", "key bytes", "one call", "call per key",
                "raw round", "one/raw", "one/pp");
    for (size_t i = 0; i < sizes.size() && sizes[i] <= kMaxRoundBytes; ++i)
      std::printf("%10zu %14.2f %14.2f %14.2f %9.0f%% %9.0f%%\n", sizes[i], packed[i], single[i],
                  rr[i], 100.0 * packed[i] / rr[i], 100.0 * packed[i] / pp[i]);
    std::printf(
        "LeNet parameters (8 keys, 431080 floats), push + pull of all: %.3f ms per step "
        "one call per key, %.3f ms with the small keys in one call\n",
        lenet_ms, lenet_grouped_ms);
    std::printf("packed messages sent: %lld\n", static_cast<long long>(packed_messages));
  }
  MPI_Finalize();
  return 0;
}

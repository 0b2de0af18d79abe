// KVStore throughput against raw MPI in the same run: for keys of 4 KiB to
// 64 MiB (float32), the time of a push + pull of one key through a server
// (dist_sync, one worker, no optimizer: the pushed value is stored and
// pulled back) next to an MPI ping-pong of the same size each way (the same
// traffic) and an osu_bw-style window of sends (one way, the link's peak).
// Raw MPI runs before and after the kvstore, the kvstore three passes; each
// figure is the best, so a busy moment of a shared machine does not decide it.
//
//   mpirun -np 1 bench_kvstore --server : -np 1 bench_kvstore
// (--min-kib K / --max-mib M, default 4 and 64, given to both ranks, pick the sizes)
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

}  // namespace

int main(int argc, char** argv) {
  bool server = false;
  int max_mib = 64, min_kib = 4;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--server")
      server = true;
    else if (a == "--max-mib" && i + 1 < argc)
      max_mib = std::stoi(argv[++i]);
    else if (a == "--min-kib" && i + 1 < argc)
      min_kib = std::stoi(argv[++i]);
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
  std::vector<double> pp(sizes.size(), 0.0), bw(sizes.size(), 0.0);
  auto measure_raw = [&] {
    std::vector<char> buf(sizes.back(), 1);
    for (size_t i = 0; i < sizes.size(); ++i) {
      pp[i] = std::max(pp[i], ping_pong(rank, peer, sizes[i], buf));
      bw[i] = std::max(bw[i], window(rank, peer, sizes[i], buf));
    }
  };
  measure_raw();

  std::vector<double> kv_best(sizes.size(), 0.0);
  double lenet_ms = 0;
  if (server) {
    Server s;
    s.run();
  } else {
    DistOptions options;
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
    // One training step's communication for LeNet's parameters (MXNet's
    // LeNet on 28x28 inputs): every key pushed and pulled, last layer first.
    const std::vector<int64_t> lenet = {500, 20, 25000, 50, 400000, 500, 5000, 10};
    std::vector<int> lkeys;
    std::vector<std::vector<NDArray>> lgrads, louts;
    std::vector<NDArray> linit;
    for (size_t i = 0; i < lenet.size(); ++i) {
      lkeys.push_back(100 + static_cast<int>(i));
      linit.push_back(NDArray::full(Shape{lenet[i]}, 1.0));
      lgrads.push_back({NDArray::full(Shape{lenet[i]}, 2.0)});
      louts.push_back({NDArray::zeros(Shape{lenet[i]})});
    }
    kv.init(lkeys, linit);
    auto step = [&] {
      for (size_t i = lenet.size(); i-- > 0;) {
        kv.push({lkeys[i]}, {lgrads[i]}, -static_cast<int>(i));
        kv.pull({lkeys[i]}, {louts[i]}, -static_cast<int>(i));
      }
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
    lenet_ms = best_ms;
    job.finish();
  }
  measure_raw();
  if (!server) {
    std::printf("%10s %14s %14s %17s %7s\n", "key bytes", "push+pull GB/s", "ping-pong GB/s",
                "window 1-way GB/s", "kv/pp");
    for (size_t i = 0; i < sizes.size(); ++i)
      std::printf("%10zu %14.2f %14.2f %17.2f %6.0f%%\n", sizes[i], kv_best[i], pp[i], bw[i],
                  100.0 * kv_best[i] / pp[i]);
    std::printf("LeNet parameters (8 keys, 431080 floats), push + pull of all: %.3f ms per step\n",
                lenet_ms);
  }
  MPI_Finalize();
  return 0;
}

// A worker for the mpi tests of the dist kvstore: it runs one scenario
// against real servers (mx-serve-ps in the same mpirun) and checks the
// values it pulls against what the semantics say they must be, exactly
// (all values are small integers or halves, so float sums are exact).
//
//   kv_test_worker SCENARIO [--type dist_sync|dist_async] [--bound N]
//                  [--timeout S] [--hash-by-rank] [--states DIR]
//                  [--gradient-dtype float32|bfloat16|float16]
// Scenarios: sync, async, compress, kill (worker 1 dies), stop (worker 1 stops),
// stop-server (worker 0 stops server 0), pack (packed keys end bit-identical
// to the same keys sent one by one, also in calls over one pack's limit),
// order (the servers sum in worker order whatever the arrival order),
// narrow (gradients pushed in 16 bits),
// rogue-empty-pack, rogue-big-pack and rogue-packed-bye (malformed
// messages; see run_rogue), mpi-single (MPI initialized without threads),
// throw (an error escapes worker 1 with its store unfinished), fail-input and
// fail-other (worker 1 fails: the job's exit status is the error's).
#include <mpi.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "kvstore/dist_coordinator.h"
#include "kvstore/gradient_compression.h"
#include "kvstore/packing.h"
#include "optim/optimizer.h"

using mx::NDArray;
using mx::Shape;
using namespace mx::kvstore;

namespace {

struct Args {
  std::string scenario;
  DistOptions options;
  std::string states_dir;
};

const std::vector<int> kKeys = {0, 1, 2, 3};
const std::vector<Shape> kShapes = {Shape{10}, Shape{3, 4}, Shape{1000}, Shape{4}};

NDArray filled(const Shape& shape, const std::function<float(int64_t)>& f) {
  std::vector<float> v(static_cast<size_t>(shape.size()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = f(static_cast<int64_t>(i));
  return NDArray::from_vector(shape, v);
}

// Pulls every key into `devices` outputs each and checks them against expected(k, i).
void check_pull(DistCoordinator& job, int devices, const std::string& when,
                const std::function<float(int, int64_t)>& expected) {
  DistKVStore& kv = job.store();
  std::vector<std::vector<NDArray>> outs;
  for (size_t k = 0; k < kKeys.size(); ++k) {
    outs.emplace_back();
    for (int d = 0; d < devices; ++d) outs.back().push_back(NDArray::zeros(kShapes[k]));
  }
  kv.pull(kKeys, outs, 0);
  for (size_t k = 0; k < kKeys.size(); ++k)
    for (const auto& out : outs[k]) {
      auto got = out.to_vector<float>();
      for (size_t i = 0; i < got.size(); ++i) {
        const float want = expected(kKeys[k], static_cast<int64_t>(i));
        if (got[i] != want)
          job.abort(mx::str("kv_test_worker ", job.rank(), ": ", when, ": key ", kKeys[k],
                            " element ", i, " is ", got[i], ", expected ", want));
      }
    }
}

std::unique_ptr<mx::optim::Optimizer> sgd(double lr) {
  return mx::optim::make_optimizer("sgd", {{"learning_rate", std::to_string(lr)}});
}

void init_keys(DistCoordinator& job) {
  DistKVStore& kv = job.store();
  std::vector<NDArray> values;
  for (size_t k = 0; k < kKeys.size(); ++k) {
    const int key = kKeys[k];
    // Only worker 0's values may reach the servers.
    values.push_back(job.rank() == 0
                         ? filled(kShapes[k], [&](int64_t i) { return key * 100.0f + i; })
                         : filled(kShapes[k], [](int64_t) { return -7.0f; }));
  }
  kv.init(kKeys, values);
  check_pull(job, 1, "after init", [](int key, int64_t i) { return key * 100.0f + i; });
}

void run_sync(DistCoordinator& job, const Args& args) {
  DistKVStore& kv = job.store();
  const int w = job.rank(), workers = job.num_workers();
  // Collectives over the workers (batches per epoch, validation sums).
  const auto sum = job.allreduce({1.0, w + 1.0}, Reduce::kSum);
  const auto low = job.allreduce({w + 1.0}, Reduce::kMin);
  if (sum != std::vector<double>{1.0 * workers, workers * (workers + 1) / 2.0} || low[0] != 1.0)
    job.abort("kv_test_worker: allreduce over the workers is wrong");
  init_keys(job);
  // Without an updater the sum over workers and devices replaces the value.
  std::vector<std::vector<NDArray>> grads;
  for (const auto& shape : kShapes)
    grads.push_back({filled(shape, [&](int64_t i) { return (w + 1) * 1.0f + i; }),
                     filled(shape, [&](int64_t i) { return (w + 1) * 2.0f + i; })});
  kv.push(kKeys, grads, 0);
  const float base = 3.0f * workers * (workers + 1) / 2;
  auto summed = [&](int, int64_t i) { return base + 2.0f * workers * i; };
  check_pull(job, 2, "after a push of 2 devices without optimizer", summed);

  // With SGD (lr 0.5) on the servers, one update per round of all workers.
  kv.set_optimizer(sgd(0.5));
  float shift = 0;
  for (int round = 0; round < 3; ++round) {
    std::vector<std::vector<NDArray>> g;
    for (const auto& shape : kShapes)
      g.push_back({filled(shape, [&](int64_t) { return (w + 1) * 1.0f + round; })});
    kv.push(kKeys, g, -round);
    shift += 0.5f * (workers * (workers + 1) / 2.0f + workers * round);
    check_pull(job, 1, mx::str("after sync round ", round),
               [&](int key, int64_t i) { return summed(key, i) - shift; });
  }
  if (!args.states_dir.empty()) {
    kv.save_optimizer_states(args.states_dir + "/opt");
    job.barrier();
    kv.load_optimizer_states(args.states_dir + "/opt");
    // A server's failure reaches every worker as an error, and the job goes on.
    bool failed = false;
    try {
      kv.load_optimizer_states(args.states_dir + "/missing");
    } catch (const mx::Error& e) {
      failed = true;
      // Worker 0 has the server's message; the others are told where to look.
      const std::string expected =
          w == 0 ? "server 0"
                 : "kvstore: worker 0 could not load the servers' optimizer states (see its "
                   "message)";
      if (std::string(e.what()).find(expected) == std::string::npos)
        job.abort(std::string("kv_test_worker: unexpected message: ") + e.what());
    }
    if (!failed) job.abort("kv_test_worker: loading missing states did not fail");
    check_pull(job, 1, "after a failed load",
               [&](int key, int64_t i) { return summed(key, i) - shift; });
  }
}

void run_async(DistCoordinator& job) {
  DistKVStore& kv = job.store();
  init_keys(job);
  kv.set_optimizer(sgd(1.0));
  const int pushes = 20;
  for (int n = 0; n < pushes; ++n) {
    std::vector<std::vector<NDArray>> g;
    for (const auto& shape : kShapes) g.push_back({NDArray::full(shape, 1.0)});
    kv.push(kKeys, g, 0);
  }
  job.barrier();  // every worker's pushes have been applied (each was acknowledged)
  const int workers = job.num_workers();
  check_pull(job, 1, "after async pushes",
             [&](int key, int64_t i) { return key * 100.0f + i - 1.0f * workers * pushes; });
}

float compress_grad(int w, int round, int64_t i) {
  return static_cast<float>((i * 7 + w * 3 + round * 5) % 11 - 5) * 0.15f;
}

void run_compress(DistCoordinator& job) {
  DistKVStore& kv = job.store();
  const float t = 0.5f;
  kv.set_gradient_compression({"2bit", t});
  init_keys(job);
  const int w = job.rank(), workers = job.num_workers();
  // The reference: each worker's residual, quantized as the notes describe.
  std::vector<std::vector<std::vector<float>>> residual(
      static_cast<size_t>(workers), std::vector<std::vector<float>>(kShapes.size()));
  for (int round = 0; round < 4; ++round) {
    std::vector<std::vector<NDArray>> g;
    for (const auto& shape : kShapes)
      g.push_back({filled(shape, [&](int64_t i) { return compress_grad(w, round, i); })});
    kv.push(kKeys, g, 0);
    std::vector<std::vector<float>> expected(kShapes.size());
    for (size_t k = 0; k < kShapes.size(); ++k) {
      const auto n = static_cast<size_t>(kShapes[k].size());
      expected[k].assign(n, 0.0f);
      for (int v = 0; v < workers; ++v) {
        auto& r = residual[static_cast<size_t>(v)][k];
        r.resize(n, 0.0f);
        for (size_t i = 0; i < n; ++i) {
          r[i] += compress_grad(v, round, static_cast<int64_t>(i));
          float q = 0;
          if (r[i] >= t) {
            q = t;
            r[i] -= t;
          } else if (r[i] <= -t) {
            q = -t;
            r[i] += t;
          }
          expected[k][i] += q;
        }
      }
    }
    check_pull(job, 1, mx::str("after compressed round ", round), [&](int key, int64_t i) {
      return expected[static_cast<size_t>(key)][static_cast<size_t>(i)];
    });
  }
}

// Keys of several sizes (packable or not, split or not with --bound), once
// pushed and pulled in one call (small ones packed) and once key by key
// (never packed), with values whose sums round differently in another
// order and SGD with momentum on the servers: both sets end bit-identical.
void run_pack(DistCoordinator& job) {
  DistKVStore& kv = job.store();
  // With the default threshold (16 KiB) and --bound 5000: 4096 floats are
  // packed, 4097 not, 16385 split over the servers.
  const std::vector<int64_t> sizes = {7, 300, 4096, 4097, 5, 2000, 16385};
  std::vector<int> together, alone;
  std::vector<NDArray> init;
  for (size_t i = 0; i < sizes.size(); ++i) {
    together.push_back(10 + static_cast<int>(i));
    alone.push_back(110 + static_cast<int>(i));
    init.push_back(filled(Shape{sizes[i]}, [&](int64_t j) { return 0.001f * (j % 97) - 0.03f; }));
  }
  std::vector<NDArray> both = init;
  both.insert(both.end(), init.begin(), init.end());
  std::vector<int> all = together;
  all.insert(all.end(), alone.begin(), alone.end());
  kv.init(all, both);
  kv.set_optimizer(mx::optim::make_optimizer(
      "sgd", {{"learning_rate", "0.1"}, {"momentum", "0.9"}, {"wd", "0.01"}}));
  const int w = job.rank();
  const int64_t before = kv.packed_messages();
  for (int round = 0; round < 4; ++round) {
    std::vector<std::vector<NDArray>> grads, outs_together, outs_alone;
    for (int64_t n : sizes) {
      grads.push_back({filled(Shape{n}, [&](int64_t j) {
        return std::sin(0.37f * static_cast<float>(j + 1) * (w + 1) + round) * 1e3f + 1e-3f;
      })});
      outs_together.push_back({NDArray::zeros(Shape{n})});
      outs_alone.push_back({NDArray::zeros(Shape{n})});
    }
    kv.push(together, grads, 0);
    kv.pull(together, outs_together, 0);
    for (size_t i = 0; i < sizes.size(); ++i) {
      kv.push({alone[i]}, {grads[i]}, 0);
      kv.pull({alone[i]}, {outs_alone[i]}, 0);
    }
    for (size_t i = 0; i < sizes.size(); ++i) {
      const NDArray& a = outs_together[i][0];
      const NDArray& b = outs_alone[i][0];
      a.wait_to_read();
      b.wait_to_read();
      if (std::memcmp(a.raw_data(), b.raw_data(), a.bytes()) != 0)
        job.abort(mx::str("kv_test_worker ", w, ": round ", round, ": key ", together[i],
                          " sent packed differs from key ", alone[i], " sent alone"));
    }
  }
  if (kv.packed_messages() == before)
    job.abort(mx::str("kv_test_worker ", w, ": no packed message was sent"));

  // More packable bytes in one call than one packed message may hold
  // (kMaxPackBytes): 2400 keys of 16 KiB, about 19 MiB a server. The
  // worker's pushes, and its pulls by the size of their replies, must go in
  // several packs (a receiver refuses a pack over the limit); the values end
  // as those of the same keys sent one by one.
  const int64_t n = 4096;
  const int count = 2400;
  std::vector<int> many, many_alone;
  std::vector<NDArray> many_init;
  std::vector<std::vector<NDArray>> many_grads, many_out, alone_out;
  for (int i = 0; i < count; ++i) {
    many.push_back(1000 + i);
    many_alone.push_back(1000 + count + i);
    many_init.push_back(
        filled(Shape{n}, [&](int64_t j) { return 1e-3f * static_cast<float>(j - i); }));
    many_grads.push_back({filled(
        Shape{n}, [&](int64_t j) { return std::cos(0.1f * static_cast<float>(i + j + w)); })});
    many_out.push_back({NDArray::zeros(Shape{n})});
    alone_out.push_back({NDArray::zeros(Shape{n})});
  }
  std::vector<int> all_many = many;
  all_many.insert(all_many.end(), many_alone.begin(), many_alone.end());
  std::vector<NDArray> all_init = many_init;
  all_init.insert(all_init.end(), many_init.begin(), many_init.end());
  kv.init(all_many, all_init);
  const int64_t packs_before = kv.packed_messages();
  kv.push(many, many_grads, 0);
  kv.pull(many, many_out, 0);
  for (auto& out : many_out) out[0].wait_to_read();
  // At least 3 packs for the pushes' 37.5 MiB and 1 for the pull's requests.
  const int64_t packs = kv.packed_messages() - packs_before;
  if (packs < 4)
    job.abort(mx::str("kv_test_worker ", w, ": ", count * n * 4,
                      " bytes pushed and pulled in one call went in ", packs, " packed messages"));
  for (int i = 0; i < count; ++i) {
    kv.push({many_alone[static_cast<size_t>(i)]}, {many_grads[static_cast<size_t>(i)]}, 0);
    kv.pull({many_alone[static_cast<size_t>(i)]}, {alone_out[static_cast<size_t>(i)]}, 0);
  }
  for (int i = 0; i < count; ++i) {
    const NDArray& a = many_out[static_cast<size_t>(i)][0];
    const NDArray& b = alone_out[static_cast<size_t>(i)][0];
    a.wait_to_read();
    b.wait_to_read();
    if (std::memcmp(a.raw_data(), b.raw_data(), a.bytes()) != 0)
      job.abort(mx::str("kv_test_worker ", w, ": key ", many[static_cast<size_t>(i)],
                        " pushed and pulled in a call of ", count, " keys differs from key ",
                        many_alone[static_cast<size_t>(i)], " sent alone"));
  }
}

// Worker w pushes kOrderValues[w] after a delay that makes the workers'
// pushes arrive last worker first; the servers must sum in worker order,
// (1e8 + -1e8) + 1 = 1, where arrival order gives (1 + -1e8) + 1e8 = 0.
void run_order(DistCoordinator& job) {
  DistKVStore& kv = job.store();
  const std::vector<float> values = {1e8f, -1e8f, 1.0f};
  if (job.num_workers() != 3) job.abort("kv_test_worker order: needs 3 workers", 2);
  const float in_order = (values[0] + values[1]) + values[2];
  const float arrival = (values[2] + values[1]) + values[0];
  if (in_order != 1.0f || arrival == in_order)
    job.abort("kv_test_worker order: the values do not depend on the order");
  init_keys(job);
  const int w = job.rank();
  for (int round = 0; round < 2; ++round) {
    job.barrier();
    std::this_thread::sleep_for(std::chrono::milliseconds(250 * (2 - w)));
    std::vector<std::vector<NDArray>> g;
    for (const auto& shape : kShapes)
      g.push_back({NDArray::full(shape, values[static_cast<size_t>(w)])});
    if (round == 0) {
      kv.push(kKeys, g, 0);  // small keys packed
    } else {
      for (size_t k = 0; k < kKeys.size(); ++k) kv.push({kKeys[k]}, {g[k]}, 0);
    }
    check_pull(job, 1, mx::str("after the delayed pushes of round ", round),
               [](int, int64_t) { return 1.0f; });
  }
}

void run_fault(DistCoordinator& job, const std::string& scenario) {
  DistKVStore& kv = job.store();
  init_keys(job);
  if (scenario == "stop-server" && job.rank() == 0)  // the test runs on one host
    kill(static_cast<pid_t>(job.roles().at(job.roles().server_rank(0)).pid), SIGSTOP);
  if (scenario != "stop-server" && job.rank() == 1) raise(scenario == "kill" ? SIGKILL : SIGSTOP);
  // The others go on and wait for the missing worker's pushes, forever: the
  // job must end by itself.
  for (int round = 0;; ++round) {
    std::vector<std::vector<NDArray>> g;
    for (const auto& shape : kShapes) g.push_back({NDArray::full(shape, 1.0)});
    kv.push(kKeys, g, 0);
    check_pull(job, 1, "fault", [](int, int64_t) { return -1e9f; });  // never reached in sync
  }
}

// Gradients pushed in 16 bits (--gradient-dtype): sums of values that 16
// bits hold exactly come back exact, a value they do not hold arrives
// rounded, and 2-bit compression on top is refused.
void run_narrow(DistCoordinator& job, const Args& args) {
  DistKVStore& kv = job.store();
  const int w = job.rank(), workers = job.num_workers();
  init_keys(job);
  std::vector<std::vector<NDArray>> grads;
  for (const auto& shape : kShapes)
    grads.push_back({filled(shape, [&](int64_t i) {
      return (w + 1) * std::ldexp(1.0f, static_cast<int>(i % 8)) + (i == 0 ? 1.0f / 4096 : 0.0f);
    })});
  kv.push(kKeys, grads, 0);
  const float weight = workers * (workers + 1) / 2.0f;
  check_pull(job, 1, mx::str("after a push as ", mx::dtype_name(args.options.gradient_dtype)),
             [&](int, int64_t i) { return weight * std::ldexp(1.0f, static_cast<int>(i % 8)); });
  try {
    kv.set_gradient_compression({"2bit", 0.5f});
    job.abort("kv_test_worker: 2-bit compression of narrowed gradients was accepted");
  } catch (const mx::InputError& e) {
    if (std::string(e.what()).find("do not combine") == std::string::npos)
      job.abort(std::string("kv_test_worker: unexpected message: ") + e.what());
  }
}

// rogue-empty-pack, rogue-big-pack, rogue-packed-bye: worker 0 sends server 0
// a message no mx worker sends (a packed message without its payload or
// over the size limit; a bye inside a pack), on a communicator of its own
// instead of a store. The server must end the job, naming the sender;
// nobody may wait for anything else.
int run_rogue(const Args& args) {
  auto comm = std::make_shared<Communicator>(worker_rank_info(args.options));
  comm->start([](const Header&, int) -> void* { return nullptr; },
              [](const Header&, int, std::string) {});
  if (comm->self().index == 0) {
    const int server = comm->roles().server_rank(0);
    if (args.scenario == "rogue-empty-pack" || args.scenario == "rogue-big-pack") {
      Header h{};
      h.type = MsgType::kPacked;
      h.id = 7;
      h.count = 1;
      // A pack over the size limit: refused when its header arrives.
      if (args.scenario == "rogue-big-pack") h.bytes = max_packed_message_bytes() + 8;
      comm->send(server, h, nullptr, std::string(static_cast<size_t>(h.bytes), '\0'));
    } else {
      Header bye{};
      bye.type = MsgType::kBye;
      PackWriter pack;
      pack.add(bye, nullptr);
      const Header h = pack.header(7);
      auto bytes = std::make_shared<PackBytes>(pack.take());
      comm->send(server, h, bytes->data.get(), std::string(), [bytes] {});
    }
  }
  // The server's abort ends this process; mpirun's --timeout bounds the wait.
  std::this_thread::sleep_for(std::chrono::seconds(50));
  comm->abort("kv_test_worker: the server did not end the job after a rogue message", 3);
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (argc < 2) {
    std::cerr << "usage: kv_test_worker SCENARIO [options]\n";
    return 2;
  }
  args.scenario = argv[1];
  bool hash_by_rank = false;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--type")
      args.options.type = next();
    else if (a == "--bound")
      args.options.bigarray_bound = std::stoll(next());
    else if (a == "--timeout")
      args.options.heartbeat_timeout_s = std::stod(next());
    else if (a == "--interval")
      args.options.heartbeat_interval_s = std::stod(next());
    else if (a == "--hash-by-rank")
      hash_by_rank = true;
    else if (a == "--gradient-dtype")
      args.options.gradient_dtype = mx::parse_dtype(next());
    else if (a == "--states")
      args.states_dir = next();
    else {
      std::cerr << "kv_test_worker: unknown option " << a << "\n";
      return 2;
    }
  }
  args.options.config_hash = 0x5eed;
  if (hash_by_rank) {
    const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
    args.options.config_hash += rank ? std::stoull(rank) : 0;
  }
  try {
    if (args.scenario.rfind("rogue-", 0) == 0) return run_rogue(args);
    if (args.scenario == "mpi-single") {
      // A host program that initialized MPI itself, without the thread
      // support the communication thread needs: refused with a message.
      int provided = 0;
      MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
      if (provided >= MPI_THREAD_SERIALIZED) {
        std::cout << "kv_test_worker mpi-single: MPI gave more thread support than asked for"
                  << std::endl;
        MPI_Finalize();
        return 77;
      }
    }
    if (args.scenario == "throw") {
      // Worker 1's error escapes with its store unfinished: the store's
      // destructor, run while the exception unwinds, must end the job
      // rather than wait in finish() for workers that may be waiting for it.
      try {
        DistCoordinator job(args.options);
        if (job.rank() == 1) throw std::runtime_error("kv_test_worker: worker 1's own error");
        job.finish();
      } catch (const std::runtime_error&) {
      }
      return 0;
    }
    std::unique_ptr<DistCoordinator> job;
    try {
      job = std::make_unique<DistCoordinator>(args.options);
    } catch (const StartupError& e) {
      return e.exit_code();  // rank 0 has printed it
    }
    try {
      if (args.scenario == "sync")
        run_sync(*job, args);
      else if (args.scenario == "async")
        run_async(*job);
      else if (args.scenario == "compress")
        run_compress(*job);
      else if (args.scenario == "pack")
        run_pack(*job);
      else if (args.scenario == "order")
        run_order(*job);
      else if (args.scenario == "narrow")
        run_narrow(*job, args);
      else if (args.scenario == "fail-input" || args.scenario == "fail-other") {
        // A worker's fatal error ends the job with the error's exit status:
        // 2 for bad input, 1 for anything else.
        if (job->rank() == 1) {
          if (args.scenario == "fail-input") job->fail(mx::InputError("worker 1's bad input"));
          job->fail(std::runtime_error("worker 1's other error"));
        }
        std::this_thread::sleep_for(std::chrono::seconds(50));  // ended by worker 1
      } else if (args.scenario == "kill" || args.scenario == "stop" ||
                 args.scenario == "stop-server")
        run_fault(*job, args.scenario);
      else
        job->abort("kv_test_worker: unknown scenario " + args.scenario, 2);
    } catch (const std::exception& e) {
      job->abort(std::string("kv_test_worker: ") + e.what());  // never leave the others waiting
    }
    const int rank = job->rank();
    job->finish();
    if (rank == 0) std::cout << "kv_test_worker " << args.scenario << ": ok" << std::endl;
  } catch (const mx::Error& e) {
    std::cerr << "kv_test_worker: error: " << e.what() << std::endl;
    return e.exit_code();
  }
  return 0;
}

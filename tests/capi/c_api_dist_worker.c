/* A worker of a dist_sync or dist_async job driven through the C API alone
 * (C99, linked with libmx.so), run by the mpi tests with mx-serve-ps:
 *   mpirun -np 1 mx-serve-ps : -np 2 c_api_dist_worker dist_sync
 * It checks ranks, init (worker 0's values win), the sum of the workers'
 * pushes, an optimizer on the servers and that the barrier waits, and prints
 * "c_api_dist_worker RANK: ok". Values are small, so float sums are exact. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mx/c_api.h"

static int rank = -1;

static void check(int rc, const char* what) {
  if (rc != 0) {
    fprintf(stderr, "c_api_dist_worker %d: %s failed: %s\n", rank, what, MXGetLastError());
    exit(1);
  }
}

static NDArrayHandle array_of(const float* values) {
  const mx_uint shape[] = {4};
  NDArrayHandle h = NULL;
  check(MXNDArrayCreate(shape, 1, 1, 0, 0, &h), "MXNDArrayCreate");
  check(MXNDArraySyncCopyFromCPU(h, values, 4), "MXNDArraySyncCopyFromCPU");
  return h;
}

static void expect_pull(KVStoreHandle kv, float want, const char* when) {
  const float zeros[4] = {0, 0, 0, 0};
  NDArrayHandle out = array_of(zeros);
  const int key = 3;
  float got[4];
  check(MXKVStorePull(kv, 1, &key, &out, 0), "MXKVStorePull");
  check(MXNDArraySyncCopyToCPU(out, got, 4), "MXNDArraySyncCopyToCPU");
  for (int i = 0; i < 4; ++i) {
    const float expected = want + (float)i;
    if (fabsf(got[i] - expected) > 1e-5f) {
      fprintf(stderr, "c_api_dist_worker %d: %s: element %d is %g, expected %g\n", rank, when, i,
              got[i], expected);
      exit(1);
    }
  }
  check(MXNDArrayFree(out), "MXNDArrayFree");
}

int main(int argc, char** argv) {
  const char* type = argc > 1 ? argv[1] : "dist_sync";
  KVStoreHandle kv = NULL;
  check(MXKVStoreCreate(type, &kv), "MXKVStoreCreate");
  int size = 0;
  check(MXKVStoreGetRank(kv, &rank), "MXKVStoreGetRank");
  check(MXKVStoreGetGroupSize(kv, &size), "MXKVStoreGetGroupSize");
  if (size != 2) {
    fprintf(stderr, "c_api_dist_worker %d: %d workers, expected 2\n", rank, size);
    return 1;
  }
  /* Init with values that differ by rank: worker 0's reach the servers. */
  const float mine[4] = {1.0f + 10.0f * (float)rank, 2, 3, 4};
  NDArrayHandle w = array_of(mine);
  const int key = 3;
  check(MXKVStoreInit(kv, 1, &key, &w), "MXKVStoreInit");
  expect_pull(kv, 1, "after init");
  if (strcmp(type, "dist_sync") == 0) {
    /* Without an optimizer the servers keep the sum of the workers' pushes.
     * Each worker pushes two arrays for the key (two devices), summed:
     * worker r gives (r + 1) + i / 2, so the workers' sum is 3 + i. */
    const float b = 0.5f * (float)(rank + 1);
    const float half[4] = {b, b + 0.25f, b + 0.5f, b + 0.75f};
    NDArrayHandle h1 = array_of(half), h2 = array_of(half);
    NDArrayHandle both[2] = {h1, h2};
    const int keys[2] = {3, 3};
    check(MXKVStorePush(kv, 2, keys, both, 0), "MXKVStorePush");
    expect_pull(kv, 3, "after a push without optimizer");
    /* SGD on the servers: (3 + i) - 0.5 * (1 + 1). */
    const char* opt_keys[] = {"learning_rate", "wd"};
    const char* opt_vals[] = {"0.5", "0"};
    check(MXKVStoreSetOptimizer(kv, "sgd", 2, opt_keys, opt_vals), "MXKVStoreSetOptimizer");
    const float ones[4] = {1, 1, 1, 1};
    NDArrayHandle g = array_of(ones);
    check(MXKVStorePush(kv, 1, &key, &g, 0), "MXKVStorePush");
    expect_pull(kv, 2, "after an SGD step on the servers");
    check(MXNDArrayFree(h1), "MXNDArrayFree");
    check(MXNDArrayFree(h2), "MXNDArrayFree");
    check(MXNDArrayFree(g), "MXNDArrayFree");
  }
  /* The barrier holds every worker until all have reached it: worker 0
   * arrives late, after writing a marker (named by mpirun's job id) that the
   * others must see once they pass it. */
  char marker[256];
  const char* job = getenv("OMPI_MCA_ess_base_jobid");
  snprintf(marker, sizeof marker, "c_api_barrier_%s", job ? job : "0");
  if (rank == 0) {
    const struct timespec late = {0, 300000000};
    nanosleep(&late, NULL);
    FILE* f = fopen(marker, "w");
    if (f) fclose(f);
  }
  check(MXKVStoreBarrier(kv), "MXKVStoreBarrier");
  if (rank != 0) {
    FILE* f = fopen(marker, "r");
    if (!f) {
      fprintf(stderr, "c_api_dist_worker %d: passed the barrier before worker 0 reached it\n",
              rank);
      exit(1);
    }
    fclose(f);
  }
  MXNDArrayFree(w);
  const int r = rank;
  check(MXKVStoreFree(kv), "MXKVStoreFree"); /* its finish waits for every worker */
  if (r == 0) remove(marker);
  printf("c_api_dist_worker %d: ok\n", r);
  return 0;
}

#!/bin/sh
# Time per training step of LeNet (batch 64 per worker, synthetic data) with
# mx-train alone (kvstore local), the same under `mpirun -np 1` (mpirun
# binds each rank to a core, which changes BLAS threading: the fair peer of
# the distributed runs), 1 worker + 1 server (dist_sync) and 2 workers +
# 1 server, the last two also with kvstore.overlap=false (every push after
# the whole backward pass, every pull waited for), alternating the six
# ROUNDS times, and 1 worker + 1 server once more with --bind-to none
# (mpirun pins each rank to a core when the ranks fit the cores, so the
# pinned worker's kernels get one core where mx-train alone gets all);
# prints each run's ms per step (epoch seconds / batches, from
# metrics.jsonl).
#   scripts/bench/dist_train_step.sh [BUILD_DIR] [BATCHES] [ROUNDS]
set -eu
build=${1:-build}
batches=${2:-200}
rounds=${3:-3}
. "$(dirname "$0")/dist_lenet_setup.sh"
for r in $(seq "$rounds"); do
  "$bin/mx-train" "$work/lenet.yaml" --run-dir "$work/local$r" > /dev/null
  mpirun -np 1 "$bin/mx-train" "$work/lenet.yaml" --run-dir "$work/bound$r" > /dev/null
  mpirun --oversubscribe -np 1 "$bin/mx-serve-ps" : -np 1 "$bin/mx-train" "$work/lenet.yaml" \
    kvstore=dist_sync --run-dir "$work/w1_$r" > /dev/null
  mpirun --oversubscribe -np 1 "$bin/mx-serve-ps" : -np 2 "$bin/mx-train" "$work/lenet.yaml" \
    kvstore=dist_sync --run-dir "$work/w2_$r" > /dev/null
  mpirun --bind-to none -np 1 "$bin/mx-serve-ps" : -np 1 "$bin/mx-train" "$work/lenet.yaml" \
    kvstore=dist_sync --run-dir "$work/n1_$r" > /dev/null
  mpirun --oversubscribe -np 1 "$bin/mx-serve-ps" : -np 1 "$bin/mx-train" "$work/lenet.yaml" \
    kvstore.type=dist_sync kvstore.overlap=false --run-dir "$work/s1_$r" > /dev/null
  mpirun --oversubscribe -np 1 "$bin/mx-serve-ps" : -np 2 "$bin/mx-train" "$work/lenet.yaml" \
    kvstore.type=dist_sync kvstore.overlap=false --run-dir "$work/s2_$r" > /dev/null
  echo "round $r: local $(step_ms "$work/local$r") ms/step;" \
    "local under mpirun $(step_ms "$work/bound$r") ms/step;" \
    "1 worker + 1 server $(step_ms "$work/w1_$r") ms/step" \
    "($(step_ms "$work/s1_$r") without overlap, $(step_ms "$work/n1_$r") unpinned);" \
    "2 workers + 1 server $(step_ms "$work/w2_$r") ms/step" \
    "($(step_ms "$work/s2_$r") without overlap; global batch 128)"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"

#!/bin/sh
# Time per LeNet training step in dist_sync with the small keys packed
# (kvstore.pack_threshold default, 16 KiB: 5 of LeNet's 8 keys travel as one
# message each way) and each key alone (kvstore.pack_threshold=0, as before
# packing), for 1 worker + 1 server and 2 workers + 1 server, alternating
# the four ROUNDS times. Batch 64 per worker, synthetic data, SGD with
# momentum, the network of scripts/bench/dist_train_step.sh. Extra mpirun
# options come from MPIRUN_OPTS (default --bind-to none: on few cores the
# worker's kernels need more than the one core mpirun would pin it to).
#   scripts/bench/dist_pack_step.sh [BUILD_DIR] [BATCHES] [ROUNDS]
set -eu
build=${1:-build}
batches=${2:-200}
rounds=${3:-3}
opts=${MPIRUN_OPTS:---bind-to none}
. "$(dirname "$0")/dist_lenet_setup.sh"
run() {  # WORKERS RUN_DIR [overrides...]
  workers=$1 dir=$2
  shift 2
  # shellcheck disable=SC2086
  mpirun --oversubscribe $opts -np 1 "$bin/mx-serve-ps" : -np "$workers" "$bin/mx-train" \
    "$work/lenet.yaml" kvstore.type=dist_sync "$@" --run-dir "$dir" > /dev/null
}
for r in $(seq "$rounds"); do
  run 1 "$work/p1_$r"
  run 1 "$work/a1_$r" kvstore.pack_threshold=0
  run 2 "$work/p2_$r"
  run 2 "$work/a2_$r" kvstore.pack_threshold=0
  echo "round $r: 1 worker + 1 server $(step_ms "$work/p1_$r") ms/step packed," \
    "$(step_ms "$work/a1_$r") each key alone;" \
    "2 workers + 1 server $(step_ms "$work/p2_$r") ms/step packed," \
    "$(step_ms "$work/a2_$r") each key alone"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"

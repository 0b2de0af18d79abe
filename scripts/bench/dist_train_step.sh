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
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cat > "$work/lenet.yaml" <<YAML
network:
  layers:
    - {op: Convolution, name: conv1, kernel: [5, 5], num_filter: 20}
    - {op: Activation, name: tanh1, act_type: tanh}
    - {op: Pooling, name: pool1, pool_type: max, kernel: [2, 2], stride: [2, 2]}
    - {op: Convolution, name: conv2, kernel: [5, 5], num_filter: 50}
    - {op: Activation, name: tanh2, act_type: tanh}
    - {op: Pooling, name: pool2, pool_type: max, kernel: [2, 2], stride: [2, 2]}
    - {op: Flatten, name: flatten}
    - {op: FullyConnected, name: fc1, num_hidden: 500}
    - {op: Activation, name: tanh3, act_type: tanh}
    - {op: FullyConnected, name: fc2, num_hidden: 10}
    - {op: SoftmaxOutput, name: softmax}
data:
  train: {type: synthetic, data_shape: [1, 28, 28], num_classes: 10, num_batches: $batches}
optimizer: {type: sgd, learning_rate: 0.01, momentum: 0.9}
train: {epochs: 1, batch_size: 64, metrics: [acc], checkpoint_every: 0, log_interval: 100000}
YAML
step_ms() {  # the run directory's epoch seconds per batch, in ms
  sed -n 's/.*"seconds":\([0-9.e+-]*\).*/\1/p' "$1/metrics.jsonl" |
    awk -v b="$batches" '{ printf "%.2f", $1 * 1000 / b }'
}
bin=$build/cmd
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

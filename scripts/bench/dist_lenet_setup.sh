# Shared by the distributed LeNet step benchmarks (dist_train_step.sh,
# dist_pack_step.sh); sourced after they set build and batches: a temporary
# work folder with LeNet's config (batch 64, synthetic data, SGD with
# momentum), step_ms RUN_DIR (ms per step from metrics.jsonl) and bin.
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

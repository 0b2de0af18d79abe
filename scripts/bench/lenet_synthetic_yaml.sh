# shellcheck shell=bash
# write_lenet_yaml FILE BATCHES: the distributed benchmarks' LeNet (batch 64,
# BATCHES synthetic batches, SGD with momentum), one definition for
# dist_lenet_setup.sh (dist_train_step.sh, dist_pack_step.sh) and
# dist_scaling.sh. Sourced.
write_lenet_yaml() {
  cat >"$1" <<YAML
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
  train: {type: synthetic, data_shape: [1, 28, 28], num_classes: 10, num_batches: $2}
optimizer: {type: sgd, learning_rate: 0.01, momentum: 0.9}
train: {epochs: 1, batch_size: 64, metrics: [acc], checkpoint_every: 0, log_interval: 100000}
YAML
}

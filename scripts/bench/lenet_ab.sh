#!/usr/bin/env bash
# LeNet training throughput (the tanh and the ReLU config) of two mx-train
# builds, alternating runs so that both see the same machine load:
#   scripts/bench/lenet_ab.sh BEFORE_MX_TRAIN AFTER_MX_TRAIN [repeats] [epochs]
# One line per run: build, config, samples/s (mx-train's epoch line), CPU
# seconds (user + sys) per epoch and the 1-minute load average at the start.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
before=${1:?give the mx-train to compare against}
after=${2:?give the mx-train to measure}
repeats=${3:-2}
epochs=${4:-1}
run_dir=$(mktemp -d)
trap 'rm -rf "$run_dir"' EXIT
TIMEFORMAT='%U %S'
for ((r = 1; r <= repeats; ++r)); do
  for config in lenet-fashion-mnist lenet-relu-fashion-mnist; do
    for build in before after; do
      program=$before
      [[ $build == after ]] && program=$after
      load=$(cut -d' ' -f1 /proc/loadavg)
      rm -rf "$run_dir/run"
      { time "$program" "$root/configs/$config.yaml" "train.epochs=$epochs" --run-dir "$run_dir/run" \
          > "$run_dir/out" 2>&1; } 2> "$run_dir/time"
      rate=$(grep -o '([0-9.]* samples/s)' "$run_dir/out" | tail -1 | tr -d '()' | cut -d' ' -f1)
      cpu=$(awk -v e="$epochs" '{ printf "%.1f", ($1 + $2) / e }' "$run_dir/time")
      echo "$build $config samples/s=$rate cpu_s_per_epoch=$cpu load=$load"
    done
  done
done

# Shared by the distributed LeNet step benchmarks (dist_train_step.sh,
# dist_pack_step.sh); sourced after they set build and batches: a temporary
# work folder with LeNet's config (batch 64, synthetic data, SGD with
# momentum), step_ms RUN_DIR (ms per step from metrics.jsonl) and bin.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# shellcheck source=scripts/bench/lenet_synthetic_yaml.sh
source "$(dirname "${BASH_SOURCE[0]}")/lenet_synthetic_yaml.sh"
write_lenet_yaml "$work/lenet.yaml" "$batches"
step_ms() {  # the run directory's epoch seconds per batch, in ms
  sed -n 's/.*"seconds":\([0-9.e+-]*\).*/\1/p' "$1/metrics.jsonl" |
    awk -v b="$batches" '{ printf "%.2f", $1 * 1000 / b }'
}
bin=$build/cmd

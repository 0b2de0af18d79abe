#!/usr/bin/env bash
# Runs the GPU checks of issue 30 from a bundle (scripts/gpu-bundle.sh) on a
# GPU machine, in a checkout of the bundle's commit: the GPU unit tests and
# every operator on gpu:0 against the CPU (test_ops_gpu), compute-sanitizer
# where installed, LeNet end to end (CPU against GPU, deterministic runs and
# an exact resume, two replicas on gpu:0 with the device store, prediction),
# and the benchmarks against PyTorch with TF32 off and on.
#   scripts/gpu-bundle-check.sh [--quick] [--fp32] [--profile|--profile-only] [--amp] [--text FILE]
#                               BUNDLE.tar.xz LOGDIR [FASHION_MNIST_DIR]
# --quick (about 2 minutes): no racecheck, the benchmarks' --quick rows in
# float32 only. --fp32 (about 3 minutes with --profile): everything in
# float32 alone (no TF32 rows or profile), without the --profile extras below.
# --profile (about 1 minute more): where a ResNet-50 training step's time
# goes, TF32 off and (without --quick) on: mx's GPU time per layer and per
# operator with its cuDNN algorithm choices (mx-train --benchmark,
# MX_LOG_LEVEL=debug) and PyTorch's kernels grouped (gpu_pytorch.py
# profile-resnet50); the training rows again with MX_GPU_SYNC=1 (every
# GPU operation waiting for its stream) and ResNet-50's with
# MX_CUDNN_BENCHMARK_LIMIT=10 (fewer cuDNN engines timed). --profile-only:
# that profile alone. --amp (about 5 minutes): mixed precision only: the
# unit tests and operator harness (with every low-precision case in float16
# and bfloat16 on gpu:0, also under memcheck), LeNet in float32, float16 and
# bfloat16 on gpu:0 (and a float16 run interrupted and resumed, equal to the
# uninterrupted one), and the training rows against PyTorch in float32,
# float16 and bfloat16 (torch.autocast), one run each
# ($MX_AMP_BENCH_PRECISIONS: a shorter list). --text FILE (about 1 minute
# more): the sequence models on gpu:0 against PyTorch's on cuda, trained on
# FILE (an English text, e.g. Debian's fortunes), two rounds each: the
# char-LSTM (cuDNN's nn.LSTM on PyTorch's side) and the char-GPT.
# The CUDA libraries come from the machine: /usr/local/cuda/lib64 and, where
# python3 has NVIDIA's pip packages (PyTorch's), their lib folders.
# FASHION_MNIST_DIR holds the four .gz IDX files (a subset of the training
# set will do); without it the LeNet part is left out. Each part has a
# time limit; the whole run takes about 5 minutes on an H200.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
quick=0
fp32_only=0
profile=0
checks=1
amp=0
text=
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --fp32) fp32_only=1 ;;
    --profile) profile=1 ;;
    --amp) amp=1 ;;
    --text)
      text=${2:?--text needs a file}
      shift
      ;;
    --profile-only)
      profile=1
      checks=0
      ;;
    *) break ;;
  esac
  shift
done
usage="usage: gpu-bundle-check.sh [--quick] [--fp32] [--profile|--profile-only] [--amp] [--text FILE] BUNDLE.tar.xz LOGDIR [FASHION_MNIST_DIR]"
bundle=${1:?$usage}
logs=${2:?$usage}
fm=${3:-}
mkdir -p "$logs"
logs=$(cd "$logs" && pwd)
start=$(date +%s)
step() { echo "== [$(($(date +%s) - start)) s] $*"; }
failures=()
fail() { failures+=("$1"); echo "FAILED: $1"; }

command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 ||
  { echo "gpu-bundle-check: no GPU found (nvidia-smi lists none)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar -C "$work" -xJf "$bundle" || { echo "gpu-bundle-check: cannot unpack $bundle" >&2; exit 1; }
nvlibs=$(python3 -c "
import glob, os
try:
    import nvidia
except ImportError:
    raise SystemExit
print(':'.join(sorted({os.path.dirname(f) for p in nvidia.__path__ for f in glob.glob(p + '/*/lib/lib*.so*')})))
" 2>/dev/null)
export LD_LIBRARY_PATH="$work/lib${nvlibs:+:$nvlibs}:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export MX_FIXTURES_DIR="$root/tests/fixtures" MX_TEST_TMP_DIR="$work/tmp"
mkdir -p "$MX_TEST_TMP_DIR"
bin=$work/build/cmd
tests=$work/build/tests
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  command -v nvcc >/dev/null && nvcc --version | tail -1
  echo "profilers: $(command -v nsys ncu compute-sanitizer | tr '\n' ' ')"
  python3 -c "import torch; print('PyTorch', torch.__version__, 'CUDA', torch.version.cuda, 'cuDNN', torch.backends.cudnn.version())" 2>/dev/null
  echo "bundle commit: $(cat "$work/commit" 2>/dev/null || echo unknown); checkout: $(git -C "$root" rev-parse HEAD 2>/dev/null)"
} | tee "$logs/machine.txt"
if missing=$(ldd "$bin/mx-train" "$tests/test_ops_gpu" | grep "not found"); then
  echo "gpu-bundle-check: libraries not found:"$'\n'"$missing" >&2
  exit 1
fi

# LeNet on Fashion-MNIST (both the float32 and the mixed-precision checks).
cfg=$root/configs/lenet-fashion-mnist.yaml
data=("data.train.image=$fm/train-images-idx3-ubyte.gz" "data.train.label=$fm/train-labels-idx1-ubyte.gz"
      "data.val.image=$fm/t10k-images-idx3-ubyte.gz" "data.val.label=$fm/t10k-labels-idx1-ubyte.gz")
runs=$work/runs
# A run's last metrics line without its timings.
last() { tail -1 "$runs/$1/metrics.jsonl" 2>/dev/null | sed -E 's/"(samples_per_sec|seconds)":[0-9.e+-]*,//g'; }

if [ $amp = 1 ]; then
  step "mixed precision: unit tests and the operator harness (16-bit cases on gpu:0)"
  # $MX_AMP_TEST_CASES: a doctest filter of test_ops_gpu's cases (a shorter run).
  for t in test_gpu test_ops_gpu; do
    filter=()
    [ "$t" = test_ops_gpu ] && [ -n "${MX_AMP_TEST_CASES:-}" ] && filter=("-tc=$MX_AMP_TEST_CASES")
    (cd "$tests" && timeout 300 "./$t" "${filter[@]}") > "$logs/$t.txt" 2>&1 ||
      fail "$t (see $t.txt)"
    tail -3 "$logs/$t.txt"
  done
  grep -B3 -A12 "ERROR" "$logs/test_ops_gpu.txt" | head -80
  if command -v compute-sanitizer >/dev/null; then
    (cd "$tests" && timeout 300 compute-sanitizer --tool memcheck --leak-check no ./test_ops_gpu \
      "-tc=low precision*") > "$logs/memcheck_amp.txt" 2>&1
    grep -q "ERROR SUMMARY: 0 errors" "$logs/memcheck_amp.txt" || fail "memcheck (see memcheck_amp.txt)"
    tail -1 "$logs/memcheck_amp.txt"
  fi
  if [ -n "$fm" ]; then
    step "mixed precision: LeNet on gpu:0 in float32, float16 and bfloat16"
    mkdir -p "$runs"
    amp_train() {  # NAME PRECISION [overrides...]
      local name=$1 precision=$2
      shift 2
      timeout 300 "$bin/mx-train" "$cfg" "${data[@]}" train.epochs=4 "train.devices=[gpu:0]" \
        "train.precision=$precision" "$@" --run-dir "$runs/$name" > "$runs/$name.log" 2>&1 ||
        { fail "mx-train $name"; tail -5 "$runs/$name.log"; }
    }
    {
      for precision in float32 float16 bfloat16; do
        amp_train "$precision" "$precision"
        echo "$precision: $(last "$precision")"
      done
      export MX_GPU_DETERMINISTIC=1
      amp_train f16a float16
      amp_train f16split float16 train.epochs=2
      timeout 300 "$bin/mx-train" --resume "$runs/f16split" train.epochs=4 > "$runs/f16resume.log" 2>&1 ||
        { fail "mx-train --resume (float16)"; tail -5 "$runs/f16resume.log"; }
      unset MX_GPU_DETERMINISTIC
      echo "float16 deterministic: $(last f16a)"
      echo "float16 resumed:       $(last f16split)"
      cmp -s "$runs/f16a/model-0004.params" "$runs/f16split/model-0004.params" ||
        fail "the resumed float16 run's parameters differ from the uninterrupted run's"
      echo "mx-predict of the float16 run (float32 checkpoint) on gpu:0: $(timeout 120 "$bin/mx-predict" \
        -m "$runs/float16" --device gpu:0 "$fm/t10k-images-idx3-ubyte.gz" \
        --labels "$fm/t10k-labels-idx1-ubyte.gz" 2>&1 | tail -1)"
    } 2>&1 | tee "$logs/lenet_amp.txt"
    grep -q "^FAILED" "$logs/lenet_amp.txt" && failures+=("LeNet mixed precision (see lenet_amp.txt)")
  fi
  if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
    for precision in ${MX_AMP_BENCH_PRECISIONS:-float32 float16 bfloat16}; do
      step "training against PyTorch in $precision"
      timeout 300 python3 "$root/scripts/bench/gpu_vs_pytorch.py" --python python3 --build "$work/build" \
        --repeats 1 --rows resnet50-train,resnet18-train --precision "$precision" \
        > "$logs/bench_amp_$precision.md" 2>&1 || fail "benchmarks $precision (see bench_amp_$precision.md)"
      cat "$logs/bench_amp_$precision.md"
    done
  fi
  checks=0
  profile=0
fi

if [ $checks = 1 ]; then
  step "GPU unit tests, kernel coverage, every operator on gpu:0 against the CPU"
  for t in test_gpu test_gpu_kernel_coverage test_ops_gpu; do
    (cd "$tests" && timeout 300 "./$t") > "$logs/$t.txt" 2>&1 || fail "$t (see $t.txt)"
    tail -3 "$logs/$t.txt"
  done
fi

if [ $checks = 1 ] && command -v compute-sanitizer >/dev/null; then
  step "compute-sanitizer: memcheck and racecheck on the operator tests"
  # test_gpu is left out of memcheck: it asks for too much memory on purpose.
  (cd "$tests" && timeout 300 compute-sanitizer --tool memcheck --leak-check no ./test_ops_gpu) \
    > "$logs/memcheck.txt" 2>&1
  grep -q "ERROR SUMMARY: 0 errors" "$logs/memcheck.txt" || fail "memcheck (see memcheck.txt)"
  tail -1 "$logs/memcheck.txt"
  if [ $quick = 0 ]; then
    (cd "$tests" && timeout 300 compute-sanitizer --tool racecheck ./test_ops_gpu \
      "-tc=gradients: BatchNorm*,gradients: sum*,gradients: Cast*,gradients: LayerNorm*,gradients: Pooling*,gradients: SoftmaxOutput*,gradients: Activation and FullyConnected,gradients: Flatten*,gradients: erf*") \
      > "$logs/racecheck.txt" 2>&1
    grep -q "0 hazards displayed (0 errors, 0 warnings)" "$logs/racecheck.txt" ||
      fail "racecheck (see racecheck.txt)"
    tail -1 "$logs/racecheck.txt"
  fi
fi

if [ $checks = 1 ] && [ -n "$fm" ]; then
  step "LeNet end to end on $fm"
  train() {  # NAME DEVICES [overrides...]: four epochs
    local name=$1 devices=$2
    shift 2
    timeout 300 "$bin/mx-train" "$cfg" "${data[@]}" train.epochs=4 "train.devices=$devices" "$@" \
      --run-dir "$runs/$name" > "$runs/$name.log" 2>&1 || { fail "mx-train $name"; tail -3 "$runs/$name.log"; }
  }
  mkdir -p "$runs"
  {
    train cpu "[cpu:0, cpu:1]"
    train gpu "[gpu:0]"
    echo "CPU:   $(last cpu)"
    echo "GPU:   $(last gpu)"
    export MX_GPU_DETERMINISTIC=1
    train det1 "[gpu:0]"
    train det2 "[gpu:0]"
    train split "[gpu:0]" train.epochs=2
    timeout 300 "$bin/mx-train" --resume "$runs/split" train.epochs=4 > "$runs/resume.log" 2>&1 ||
      fail "mx-train --resume"
    unset MX_GPU_DETERMINISTIC
    echo "det1:  $(last det1)"
    echo "det2:  $(last det2)"
    echo "split: $(last split)"
    cmp -s "$runs/det1/model-0004.params" "$runs/det2/model-0004.params" ||
      fail "two MX_GPU_DETERMINISTIC=1 runs differ"
    cmp -s "$runs/det1/model-0004.params" "$runs/split/model-0004.params" ||
      fail "the resumed run's parameters differ from the uninterrupted run's"
    train two "[gpu:0, gpu:0]" kvstore=device
    echo "two replicas on gpu:0: $(last two)"
    for device in cpu gpu:0; do
      echo "mx-predict --device $device: $(timeout 120 "$bin/mx-predict" -m "$runs/gpu" --device "$device" \
        "$fm/t10k-images-idx3-ubyte.gz" --labels "$fm/t10k-labels-idx1-ubyte.gz" 2>&1 | tail -1)"
    done
  } 2>&1 | tee "$logs/lenet.txt"
  grep -q "^FAILED" "$logs/lenet.txt" && failures+=("LeNet (see lenet.txt)")
fi

if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
  modes=(fp32 tf32)
  [ $quick = 1 ] || [ $fp32_only = 1 ] && modes=(fp32)
  for mode in "${modes[@]}"; do
    [ $checks = 1 ] || break
    step "benchmarks against PyTorch ($mode)"
    flags=(--repeats 2)
    [ "$mode" = tf32 ] && flags=(--repeats 1 --tf32)
    [ $quick = 1 ] && flags=(--repeats 1 --quick)
    timeout 600 python3 "$root/scripts/bench/gpu_vs_pytorch.py" --python python3 --build "$work/build" \
      "${flags[@]}" > "$logs/bench_$mode.md" 2>&1 || fail "benchmarks $mode (see bench_$mode.md)"
    cat "$logs/bench_$mode.md"
  done
  if [ -n "$text" ]; then
    for model in charlstm chargpt; do
      step "$model on gpu:0 against PyTorch on cuda ($text)"
      timeout 300 python3 "$root/scripts/bench/${model}_vs_pytorch.py" --python python3 \
        --build "$work/build" --device gpu --text "$text" --steps 200 --rounds 2 \
        > "$logs/bench_$model.txt" 2>&1 || fail "$model on the GPU (see bench_$model.txt)"
      cat "$logs/bench_$model.txt"
    done
  fi
  for mode in "${modes[@]}"; do
    [ $profile = 1 ] || break
    step "profile ($mode): mx's GPU time per layer and operator, PyTorch's kernels"
    tf32=0 peer_flags=()
    [ "$mode" = tf32 ] && tf32=1 peer_flags=(--tf32)
    MX_GPU_TF32=$tf32 MX_LOG_LEVEL=debug timeout 120 "$bin/mx-train" \
      "$root/configs/resnet50-synthetic.yaml" "train.devices=[gpu:0]" train.batch_size=64 \
      --benchmark 5 > "$logs/resnet50_layers_$mode.txt" 2>&1 || fail "mx-train --benchmark ($mode)"
    sed -n '/^by operator/,$p' "$logs/resnet50_layers_$mode.txt"
    timeout 120 python3 "$root/scripts/bench/gpu_pytorch.py" profile-resnet50 --batches 5 \
      "${peer_flags[@]}" > "$logs/pytorch_profile_$mode.txt" 2>&1 ||
      fail "PyTorch profile $mode (see pytorch_profile_$mode.txt)"
    grep -v Warn "$logs/pytorch_profile_$mode.txt" | head -14
  done
  if [ $profile = 1 ] && [ $checks = 1 ] && [ $fp32_only = 0 ]; then
    step "the training rows with MX_GPU_SYNC=1 (each GPU operation waits for its stream)"
    sync_flags=(--repeats 1)
    [ $quick = 1 ] && sync_flags+=(--quick)
    MX_GPU_SYNC=1 timeout 300 python3 "$root/scripts/bench/gpu_vs_pytorch.py" --python python3 \
      --build "$work/build" "${sync_flags[@]}" --rows resnet50-train,resnet18-train \
      > "$logs/bench_sync_each_op.md" 2>&1 || fail "benchmarks with MX_GPU_SYNC=1"
    cat "$logs/bench_sync_each_op.md"
    step "ResNet-50 training with MX_CUDNN_BENCHMARK_LIMIT=10 (PyTorch's default count of timed engines)"
    MX_CUDNN_BENCHMARK_LIMIT=10 timeout 200 python3 "$root/scripts/bench/gpu_vs_pytorch.py" \
      --python python3 --build "$work/build" --repeats 1 --rows resnet50-train \
      > "$logs/bench_limit10.md" 2>&1 || fail "benchmarks with MX_CUDNN_BENCHMARK_LIMIT=10"
    cat "$logs/bench_limit10.md"
  fi
else
  echo "benchmarks left out: python3 has no PyTorch with CUDA"
fi

step "summary (logs in $logs)"
if [ ${#failures[@]} -eq 0 ]; then
  echo "gpu-bundle-check: everything passed"
else
  printf 'gpu-bundle-check: FAILED: %s\n' "${failures[@]}"
  exit 1
fi

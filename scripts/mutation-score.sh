#!/usr/bin/env bash
# Mutation score of source files: how many small, plausible bugs the tests
# catch. universalmutator (PyPI; regex rules that know C++) writes the
# mutants of each file; a seeded random sample of them is built and tested
# one at a time against the tests of the file's layer.
#
#   scripts/mutation-score.sh [options] FILE...
#     -n N        mutants that compile to test per file (default 12); the
#                 sample is drawn in a seeded random order, skipping mutants
#                 that do not compile (at most 10N tries: in some files only
#                 one mutant in six compiles)
#     -s SEED     sampling seed (default 1)
#     -t SECONDS  time-out per mutant, build + tests (default 300); a mutant
#                 that runs past it counts as killed (a hang is caught)
#     -R REGEX    ctest -R regex of the tests to run (default: from the path)
#     -d DIR      work folder (default build-mutation): a copy of the tracked
#                 sources, its own build and the universalmutator venv. The
#                 sources being edited and the main build are never touched.
#     -j JOBS     parallel build jobs (default: ninja's); -j1 leaves cores to
#                 others on a shared machine
#     -m          also run the jobs labelled mpi (mpirun on this machine; the
#                 default tests of lib/kvstore then include the kvstore jobs
#                 of tests/kvstore/mpi_tests.cmake, for the files that only
#                 run inside mx-serve-ps or a distributed worker)
#
# Output: per mutant "killed", "SURVIVED" or "stillborn" (does not compile,
# not counted), then the score per file and the survivors as diffs, also
# written to DIR/report.txt. The tests run without the slow, sanitizer, fuzz
# and gpu labels, and without mpi unless -m is given.
set -euo pipefail

samples=12
seed=1
limit=300
regex=""
work=build-mutation
jobs=()
excluded='slow|sanitizer|fuzz|gpu|mpi'
with_mpi=0
while getopts "n:s:t:R:d:j:mh" opt; do
  case $opt in
    n) samples=$OPTARG ;;
    s) seed=$OPTARG ;;
    t) limit=$OPTARG ;;
    R) regex=$OPTARG ;;
    d) work=$OPTARG ;;
    j) jobs=(-j "$OPTARG") ;;
    m) with_mpi=1 excluded='slow|sanitizer|fuzz|gpu' ;;
    *) sed -n '2,26p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if [ $# -eq 0 ]; then
  sed -n '2,26p' "$0"
  exit 2
fi

root=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
cd "$root"
for f in "$@"; do
  [ -f "$f" ] || { echo "mutation-score: $f: no such file" >&2; exit 2; }
done
mkdir -p "$work"
work=$(cd "$work" && pwd)
src=$work/src
build=$work/build

# universalmutator in a venv of its own (not a test dependency).
if ! command -v mutate >/dev/null; then
  if [ ! -x "$work/venv/bin/mutate" ]; then
    python3 -m venv "$work/venv"
    "$work/venv/bin/pip" install -q universalmutator
  fi
  PATH=$work/venv/bin:$PATH
fi

# A copy of the tracked files (as they are now, edits included). Only files
# whose text differs from the copy's are replaced, and they get the time of
# the copy: the checkout's times can be older than objects built from an
# earlier copy (a file edited since, or left mutated by a run stopped in the
# middle), which the build would then take for up to date.
mkdir -p "$src"
rm -rf "$work/stage"
mkdir -p "$work/stage"
git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf - | tar -C "$work/stage" -xf -
(cd "$work/stage" && find . -type f -print0) | while IFS= read -r -d '' f; do
  if ! cmp -s "$work/stage/$f" "$src/$f"; then
    mkdir -p "$(dirname "$src/$f")"
    cp --preserve=mode "$work/stage/$f" "$src/$f"
  fi
done
rm -rf "$work/stage"
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMX_SANITIZER_TESTS=OFF \
    -DMX_BUILD_BENCHMARKS=OFF -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
fi
if [ ! -f "$build/compile_commands.json" ]; then
  cmake -B "$build" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
fi

# The tests (ctest -R) of a file's layer, and the targets they need.
tests_for() {
  case $1 in
    lib/engine/*) echo "^test_engine$|^test_ndarray" ;;
    lib/storage/*) echo "^test_storage$|^test_ndarray" ;;
    lib/ndarray/*) echo "^test_ndarray|^test_optim$" ;;
    lib/graph/* | lib/executor/*) echo "^test_symbol$|^test_executor$|^test_mxnet_networks$" ;;
    lib/op/*) echo "^test_op" ;;
    lib/optim/*) echo "^test_optim$" ;;
    lib/metric/*) echo "^test_metric$" ;;
    recordio/*) echo "^test_recordio$|^test_io$" ;;
    lib/io/*) echo "^test_io$|^cli_mx_pack$" ;;
    lib/train/*) echo "^test_config$|^test_network_yaml$|^test_trainer|^test_run_control$|^cli_train" ;;
    # The mpi jobs only with -m (they need mpirun and take minutes): the
    # kvstore jobs, not the mx-train or multi-host ones.
    lib/kvstore/*)
      if [ $with_mpi = 1 ]; then
        echo "^test_kvstore$|^test_kvstore_settings$|^test_peer_liveness$|^mpi_kvstore_|^mpi_c_api_kvstore"
      else
        echo "^test_kvstore$|^test_kvstore_settings$|^test_peer_liveness$"
      fi
      ;;
    # ONNX's own node and model suites (libonnx-testdata) with mx's tests
    # (cli_quantize_onnx, 30 s, only with -R).
    lib/onnx/*) echo "^test_onnx$|^test_onnx_coverage$|^onnx_conformance_" ;;
    *) echo "" ;;
  esac
}
targets_for() {
  local names
  names=$(cd "$build" && ctest -N -R "$1" | sed -n 's/^ *Test *#[0-9]*: //p')
  for t in $names; do
    case $t in
      cli_mx_export | cli_train_pretrained_onnx) echo mx-train mx-export ;;
      cli_*) echo mx-train mx-pack mx-predict mx-params interrupt_after ;;
      test_op_coverage) echo test_op_coverage test_ops_elemwise test_ops_nn test_ops_tensor ;;
      onnx_conformance_*) echo onnx_conformance ;;  # one program, a suite each
      cli_quantize_onnx) echo mx-quantize mx-predict ;;
      mpi_kvstore_*) echo mx-serve-ps kv_test_worker mpi_fault_shim ;;
      mpi_c_api_kvstore*) echo mx-serve-ps c_api_dist_worker ;;
      mpi_train_* | mpi_hosts_*) echo mx-serve-ps mx-train params_close ;;
      # Variants that run another test's program under other settings.
      *_naive_engine) echo "${t%_naive_engine}" ;;
      *_dnnl_off) echo "${t%_dnnl_off}" ;;
      *_vmath_scalar | *_vmath_avx2) echo "${t%_vmath_*}" ;;
      test_vmath_forced_scalar) echo test_vmath ;;
      *) echo "$t" ;;
    esac
  done | tr ' ' '\n' | sort -u | tr '\n' ' '
}

report=$work/report.txt
: >"$report"
say() { echo "$@" | tee -a "$report"; }

for file in "$@"; do
  file_regex=${regex:-$(tests_for "$file")}
  if [ -z "$file_regex" ]; then
    echo "mutation-score: no tests known for $file; give them with -R" >&2
    exit 2
  fi
  targets=$(targets_for "$file_regex")
  # The unmutated file must build and pass, or no mutant says anything.
  cmake --build "$build" "${jobs[@]}" --target $targets >/dev/null
  if ! (cd "$build" && ctest -R "$file_regex" -LE "$excluded" -j1 \
        --timeout "$limit" >/dev/null); then
    echo "mutation-score: the tests fail without mutants ($file_regex)" >&2
    exit 1
  fi

  name=$(echo "$file" | tr '/' '_')
  mutants=$work/mutants/$name
  rm -rf "$mutants"
  mkdir -p "$mutants"
  # universalmutator takes "{-" for the start of a Haskell block comment and
  # mutates nothing after it (`{-1}` in C++): mutate a copy written "{ -"
  # and put "{-" back in each mutant.
  if grep -q '{ -' "$src/$file"; then
    echo "mutation-score: $file: contains '{ -', which the '{-' workaround uses" >&2
    exit 2
  fi
  rm -rf "$work/spaced"
  mkdir -p "$(dirname "$work/spaced/$file")"
  sed 's/{-/{ -/g' "$src/$file" >"$work/spaced/$file"
  (cd "$work/spaced" && mutate "$file" cpp --noCheck --mutantDir "$mutants" >/dev/null)
  find "$mutants" -type f -exec sed -i 's/{ -/{-/g' {} +
  all=$(ls "$mutants" | sort)
  total=$(echo "$all" | grep -c . || true)
  order=$(echo "$all" | python3 -c "
import random, sys
names = [l.strip() for l in sys.stdin if l.strip()]
random.Random($seed).shuffle(names)
print('\n'.join(names[:10 * $samples]))")
  say "== $file: $total mutants, $samples compiling ones sampled (seed $seed); tests: $file_regex"
  killed=0 survived=0 stillborn=0
  survivors=""
  cp "$src/$file" "$work/original"
  # Most regex mutants of C++ do not compile; a syntax-only compile of the
  # file weeds them out in a few seconds instead of a full build.
  syntax=$(python3 -c "
import json, os, shlex, sys
for e in json.load(open('$build/compile_commands.json')):
    if os.path.realpath(e['file']) == os.path.realpath('$src/$file'):
        args = shlex.split(e['command'])
        if os.path.basename(args[0]) == 'ccache':
            args = args[1:]
        kept, skip = [], False
        for a in args:  # no dependency file, no object
            if skip:
                skip = False
            elif a in ('-MT', '-MF', '-MQ', '-o'):
                skip = True
            elif a not in ('-MD', '-MMD'):
                kept.append(a)
        args = kept
        print(shlex.join(args + ['-fsyntax-only', '-w']))
        break")
  for m in $order; do
    [ $((killed + survived)) -ge "$samples" ] && break
    cp "$mutants/$m" "$src/$file"
    set +e
    built=1
    if [ -z "$syntax" ] || (cd "$build" && eval "$syntax" >/dev/null 2>&1); then
      timeout "$limit" cmake --build "$build" "${jobs[@]}" --target $targets >/dev/null 2>&1
      built=$?
    fi
    result=stillborn
    if [ $built -eq 0 ]; then
      (cd "$build" && timeout "$limit" ctest -R "$file_regex" -LE "$excluded" \
        -j1 --stop-on-failure >/dev/null 2>&1)
      # Failing, crashing or running past the limit: the tests noticed.
      [ $? -eq 0 ] && result=SURVIVED || result=killed
    fi
    set -e
    cp "$work/original" "$src/$file"
    touch "$src/$file"
    case $result in
      killed) killed=$((killed + 1)) ;;
      stillborn) stillborn=$((stillborn + 1)) ;;
      SURVIVED)
        survived=$((survived + 1))
        survivors="$survivors $m"
        ;;
    esac
    say "  $m: $result ($(diff "$work/original" "$mutants/$m" | sed -n 's/^> *//p' | head -1 | cut -c1-90))"
  done
  counted=$((killed + survived))
  if [ $counted -gt 0 ]; then
    say "   score: $killed/$counted killed ($((100 * killed / counted))%), $stillborn stillborn"
  else
    say "   score: no mutant compiled ($stillborn stillborn)"
  fi
  for m in $survivors; do
    say "   survivor $m:"
    { diff -u "$work/original" "$mutants/$m" || true; } | tail -n +3 | sed 's/^/     /' | tee -a "$report"
  done
  # Leave the build as the sources are.
  touch "$src/$file"
  cmake --build "$build" "${jobs[@]}" --target $targets >/dev/null 2>&1 || true
done

#!/usr/bin/env bash
# Scaffolds a new operator: every file docs/adding-an-operator.md lists, made
# or edited in one go, so that the new operator builds, registers, runs on the
# CPU and the GPU and passes its gradient check before its real kernels are
# written. The template is an element-wise y = scale * x + shift. The ctest
# new_op_scaffold runs this script on a copy of the tree, compiles what it
# made and runs its test.
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: scripts/new-op.sh NAME --family nn|tensor [--stem STEM] [--root DIR]

Scaffolds the operator NAME (MXNet's spelling, e.g. ScaleShift) as a working
element-wise y = scale * x + shift, with its CPU and GPU kernels, its gradient
check and every registration mx requires, then prints what it changed and
what to do next. docs/adding-an-operator.md lists the files.

  NAME            the operator's registered name: a C++ identifier
  --family F      nn (layers, lib/op/nn) or tensor (tensor operations, lib/op/tensor)
  --stem STEM     the file stem (default: NAME in snake_case, ScaleShift -> scale_shift)
  --root DIR      the source tree to change (default: the one holding this script)
  -h, --help      this text

Exit codes: 0 done, 2 bad input (nothing is changed then).
EOF
}

die() {
  echo "new-op.sh: $*" >&2
  exit 2
}

name="" family="" stem="" root=""
while [ $# -gt 0 ]; do
  case "$1" in
    -h | --help)
      usage
      exit 0
      ;;
    --family | --stem | --root)
      [ $# -ge 2 ] || die "$1 needs a value (see --help)"
      case "$1" in
        --family) family=$2 ;;
        --stem) stem=$2 ;;
        --root) root=$2 ;;
      esac
      shift 2
      ;;
    --family=* | --stem=* | --root=*)
      value=${1#*=}
      case "$1" in
        --family=*) family=$value ;;
        --stem=*) stem=$value ;;
        --root=*) root=$value ;;
      esac
      shift
      ;;
    -*) die "unknown option '$1' (see --help)" ;;
    *)
      [ -z "$name" ] || die "one operator at a time: '$name' and '$1' given"
      name=$1
      shift
      ;;
  esac
done

[ -n "$name" ] || die "no operator name given (see --help)"
[[ "$name" =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] ||
  die "'$name' is not a C++ identifier (letters, digits and '_', not starting with a digit)"
case "$family" in
  nn | tensor) ;;
  "") die "--family is required: nn (layers) or tensor (tensor operations)" ;;
  *) die "unknown family '$family': nn (layers) or tensor (tensor operations)" ;;
esac
if [ -z "$stem" ]; then
  # CamelCase to snake_case: ScaleShift -> scale_shift, LRNNorm -> lrn_norm.
  stem=$(printf '%s' "$name" |
    sed -E 's/([A-Z]+)([A-Z][a-z])/\1_\2/g; s/([a-z0-9])([A-Z])/\1_\2/g' |
    tr '[:upper:]' '[:lower:]' | sed -E 's/_+/_/g; s/^_//; s/_$//')
fi
[[ "$stem" =~ ^[a-z][a-z0-9_]*$ ]] ||
  die "file stem '$stem' must be lower case letters, digits and '_' and start with a letter"
# The C++ names: scale_shift -> ScaleShift (the parameter struct, the functors).
camel=$(printf '%s' "$stem" | sed -E 's/(^|_)([a-z])/\U\2/g; s/_//g')

if [ -z "$root" ]; then
  root=$(cd "$(dirname "$0")/.." && pwd)
fi
[ -d "$root" ] || die "--root '$root' is not a folder"
root=$(cd "$root" && pwd)
[ -f "$root/lib/op/registry.h" ] || die "'$root' is not an mx source tree (no lib/op/registry.h)"

# The files, relative to the root.
op_cc=lib/op/$family/$stem.cc
kernels_h=lib/op/$family/${stem}_kernels.h
gpu_h=lib/op/cuda/${stem}_gpu.h
gpu_cu=lib/op/cuda/${stem}_gpu.cu
test_cc=tests/op/test_ops_$stem.cc
created=("$op_cc" "$kernels_h" "$gpu_h" "$gpu_cu" "$test_cc")
fixture_py=scripts/fixtures/op_cases/$family.py
edited=(lib/op/registry.h lib/op/registry.cc lib/op/CMakeLists.txt tests/CMakeLists.txt
  lib/onnx/unexported_ops.cc "$fixture_py")

# Each edit goes above a marker line, which must be there exactly once.
marker_ops="scripts/new-op.sh adds new operators above this line."
marker_gpu="scripts/new-op.sh adds new GPU kernel files above this line."
require_marker() {
  local file=$1 marker=$2 count
  count=$(grep -cF -- "$marker" "$root/$file" || true)
  [ "$count" = 1 ] || die "$file: expected the line '$marker' once, found it $count times"
}

# --- check everything before changing anything ---------------------------------
for f in "${edited[@]}"; do
  [ -f "$root/$f" ] || die "$f is missing"
done
# The registered names: docs/operators.md (headings and aliases, checked
# against the registry by a test) and the declarations in lib/op.
if grep -qxF "## $name" "$root/docs/operators.md" ||
  grep -E '^Also called: ' "$root/docs/operators.md" | grep -qE "[ ,]${name}[,.]" ||
  grep -rqE "(add<[A-Za-z_:]+>|alias)\(\"$name\"\)" "$root/lib/op"; then
  die "an operator (or alias) named '$name' is already registered"
fi
for f in "${created[@]}"; do
  [ ! -e "$root/$f" ] || die "$f already exists (another operator with the stem '$stem'?)"
done
for f in lib/op/registry.h lib/op/registry.cc tests/CMakeLists.txt lib/onnx/unexported_ops.cc; do
  require_marker "$f" "$marker_ops"
done
require_marker lib/op/CMakeLists.txt "$marker_ops"
require_marker lib/op/CMakeLists.txt "$marker_gpu"
grep -qE "\bregister_${stem}_ops\b" "$root/lib/op/registry.h" &&
  die "lib/op/registry.h already declares register_${stem}_ops (choose another --stem)"
grep -qE "\btest_ops_${stem}\b" "$root/tests/CMakeLists.txt" &&
  die "tests/CMakeLists.txt already has a test test_ops_${stem} (choose another --stem)"
grep -qF "\"$name\"" "$root/lib/onnx/unexported_ops.cc" &&
  die "lib/onnx/unexported_ops.cc already lists '$name'"
# Uncommitted changes to a file this script edits would mix with its edits.
if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  dirty=$(cd "$root" && git status --porcelain -- "${edited[@]}")
  [ -z "$dirty" ] ||
    die "uncommitted changes in files this script edits; commit or stash them first:
$dirty"
fi

# --- make the new files -----------------------------------------------------------
write() {  # write FILE: standard input into $root/FILE
  mkdir -p "$(dirname "$root/$1")"
  cat >"$root/$1"
}

write "$op_cc" <<EOF
// $name: y = scale * x + shift, element-wise (made by scripts/new-op.sh as
// a working template; docs/adding-an-operator.md explains each part). The
// per-element arithmetic is in ${stem}_kernels.h, shared with the GPU.
#include "op/$family/${stem}_kernels.h"
#include "op/infer_util.h"
#include "op/kernel_util.h"
#include "op/registry.h"
#if MX_USE_CUDA
#include "op/cuda/${stem}_gpu.h"
#endif

namespace mx::op {
namespace {

struct ${camel}Param : Params<${camel}Param> {
  float scale = 1.0f;
  float shift = 0.0f;

  static void declare(ParamDecl<${camel}Param>& d) {
    d.field("scale", &${camel}Param::scale).set_default(1.0f).describe("Factor of each element.");
    d.field("shift", &${camel}Param::shift).set_default(0.0f).describe("Added after scaling.");
  }
};

void forward_kernel(const ${camel}Param& p, const ForwardCall& c) {
  if (c.req[0] == OpReq::kNull) return;
  dispatch_real(c.inputs[0].dtype, "$name", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const kernels::${camel}Forward<T> f{static_cast<T>(p.scale), static_cast<T>(p.shift),
                                        c.inputs[0].ptr<T>(), c.outputs[0].ptr<T>(), c.req[0]};
    parallel_elements(c.outputs[0].size(), f);
  });
}

void backward_kernel(const ${camel}Param& p, const BackwardCall& c) {
  if (c.req[0] == OpReq::kNull) return;
  dispatch_real(c.out_grads[0].dtype, "$name", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const kernels::${camel}Backward<T> f{static_cast<T>(p.scale), c.out_grads[0].ptr<T>(),
                                         c.in_grads[0].ptr<T>(), c.req[0]};
    parallel_elements(c.in_grads[0].size(), f);
  });
}

}  // namespace

void register_${stem}_ops(OpRegistry& r) {
  // AMP class float32: the kernels take float32 and float64. With bfloat16
  // kernels (dispatch_real_bf16) and a case in tests/op/test_ops_amp.cc it
  // may follow its input instead (AmpClass::kFollow).
  auto op = r.add<${camel}Param>("$name").amp(AmpClass::kFloat32);
  op.describe("Scales and shifts each element: output = scale * data + shift.")
      .inputs({"data"})
      .infer_shape([](const ${camel}Param&, ShapeVector& in, ShapeVector&, ShapeVector& out) {
        infer_same_shape(in, out);
      })
      // The kernels read each element before writing it, and the backward
      // reads only the output gradient.
      .inplace({{0, 0}})
      .backward_uses(false, false)
      .backward_inplace()
      .forward_cpu(forward_kernel)
      .backward_cpu(backward_kernel);
#if MX_USE_CUDA
  op.forward(DeviceKind::kGPU,
             [](const ${camel}Param& p, const ForwardCall& c) {
               cuda::${stem}_forward_gpu(c.rctx, p.scale, p.shift, c.inputs[0], c.outputs[0],
                                         c.req[0]);
             })
      .backward(DeviceKind::kGPU, [](const ${camel}Param& p, const BackwardCall& c) {
        cuda::${stem}_backward_gpu(c.rctx, p.scale, c.out_grads[0], c.in_grads[0], c.req[0]);
      });
#endif
}

}  // namespace mx::op
EOF

write "$kernels_h" <<EOF
// $name's per-element functors, run by its CPU kernels ($stem.cc, through
// parallel_elements) and its GPU kernels (lib/op/cuda/${stem}_gpu.cu): one
// definition of the arithmetic for both devices, so the CPU tests check the
// code the GPU runs.
#pragma once

#include <cstdint>

#include "base/host_device.h"
#include "op/tensor_ref.h"

namespace mx::op::kernels {

// y[i] (req) scale * x[i] + shift; reads x[i] first, so y may be x (in place).
template <typename T>
struct ${camel}Forward {
  T scale, shift;
  const T* x;
  T* y;
  OpReq req;
  // load/store: four loads in flight per GPU thread (cuda/launch.cuh).
  MX_HOST_DEVICE T load(int64_t i) const { return x[i]; }
  MX_HOST_DEVICE void store(int64_t i, T xi) const { assign(y + i, req, scale * xi + shift); }
  MX_HOST_DEVICE void operator()(int64_t i) const { store(i, load(i)); }
};

// dx[i] (req) scale * dy[i]; dx may be dy (backward in place).
template <typename T>
struct ${camel}Backward {
  T scale;
  const T* dy;
  T* dx;
  OpReq req;
  MX_HOST_DEVICE T load(int64_t i) const { return dy[i]; }
  MX_HOST_DEVICE void store(int64_t i, T dyi) const { assign(dx + i, req, scale * dyi); }
  MX_HOST_DEVICE void operator()(int64_t i) const { store(i, load(i)); }
};

}  // namespace mx::op::kernels
EOF

write "$gpu_h" <<EOF
// $name's GPU kernels; functors in op/$family/${stem}_kernels.h.
// Asynchronous on the stream of \`rctx\`; float32 and float64.
#pragma once

#include "engine/engine.h"
#include "op/tensor_ref.h"

namespace mx::op::cuda {

// y (req) scale * x + shift.
void ${stem}_forward_gpu(const RunContext& rctx, float scale, float shift, const TensorRef& x,
                         const TensorRef& y, OpReq req);

// dx (req) scale * dy.
void ${stem}_backward_gpu(const RunContext& rctx, float scale, const TensorRef& dy,
                          const TensorRef& dx, OpReq req);

}  // namespace mx::op::cuda
EOF

write "$gpu_cu" <<EOF
#include "op/$family/${stem}_kernels.h"
#include "op/cuda/${stem}_gpu.h"
#include "op/cuda/launch.cuh"
#include "op/infer_util.h"

namespace mx::op::cuda {

void ${stem}_forward_gpu(const RunContext& rctx, float scale, float shift, const TensorRef& x,
                         const TensorRef& y, OpReq req) {
  if (req == OpReq::kNull) return;
  dispatch_real(x.dtype, "$name", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const kernels::${camel}Forward<T> f{static_cast<T>(scale), static_cast<T>(shift), x.ptr<T>(),
                                        y.ptr<T>(), req};
    launch_elements(y.size(), stream_of(rctx.stream), "$name", f);
  });
}

void ${stem}_backward_gpu(const RunContext& rctx, float scale, const TensorRef& dy,
                          const TensorRef& dx, OpReq req) {
  if (req == OpReq::kNull) return;
  dispatch_real(dy.dtype, "$name", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const kernels::${camel}Backward<T> f{static_cast<T>(scale), dy.ptr<T>(), dx.ptr<T>(), req};
    launch_elements(dx.size(), stream_of(rctx.stream), "$name", f);
  });
}

}  // namespace mx::op::cuda
EOF

write "$test_cc" <<EOF
// $name: the finite-difference gradient check and a check of the forward
// and backward passes against values worked out by hand (made by
// scripts/new-op.sh). Where MXNet has the operator, check its values
// instead: cases in scripts/fixtures/op_cases/$family.py, loaded with
// load_reference_cases("$family") (docs/adding-an-operator.md, "Tests").
#include <doctest/doctest.h>

#include "op_harness.h"

using namespace mx;
using namespace mx::test;

TEST_CASE("gradients: $name") {
  check_gradient("$name", {{"scale", "2.5"}, {"shift", "-0.75"}}, {Shape{3, 7}});
  check_gradient("$name", {}, {Shape{2, 3, 4}});  // the defaults
}

TEST_CASE("reference: $name against values worked out by hand") {
  ReferenceCase c;
  c.id = "${stem}_by_hand";
  c.op = "$name";
  c.attrs = {{"scale", "2"}, {"shift", "0.5"}};
  const Shape shape{2, 3};
  c.inputs = {NDArray::from_vector<float>(shape, {-1.0f, 0.0f, 1.0f, 2.0f, 3.0f, 0.25f})};
  // 2 x + 0.5
  c.outputs = {NDArray::from_vector<float>(shape, {-1.5f, 0.5f, 2.5f, 4.5f, 6.5f, 1.0f})};
  c.out_grads = {NDArray::from_vector<float>(shape, {1.0f, -1.0f, 2.0f, 0.0f, 0.5f, 3.0f})};
  // 2 times the output's gradient
  c.in_grads = {NDArray::from_vector<float>(shape, {2.0f, -2.0f, 4.0f, 0.0f, 1.0f, 6.0f})};
  check_reference(c);
}
EOF

# Formatted as the rest of the tree when clang-format is at hand (the
# templates are, for names of usual length).
if command -v clang-format >/dev/null 2>&1; then
  (cd "$root" && clang-format -i --style=file "$op_cc" "$kernels_h" "$gpu_h" "$gpu_cu" "$test_cc")
fi

# --- edit the shared files ------------------------------------------------------------
insert_above() {  # insert_above FILE MARKER LINE: LINE above MARKER, indented as it
  local file=$root/$1 tmp
  tmp=$(mktemp "$file.XXXXXX")
  MARKER=$2 LINE=$3 awk 'index($0, ENVIRON["MARKER"]) {
      match($0, /^[ \t]*/); print substr($0, 1, RLENGTH) ENVIRON["LINE"] }
    { print }' "$file" >"$tmp"
  cat "$tmp" >"$file"  # keeps the file's mode
  rm -f "$tmp"
}
insert_above lib/op/registry.h "$marker_ops" "void register_${stem}_ops(OpRegistry& r);"
insert_above lib/op/registry.cc "$marker_ops" "register_${stem}_ops(r);"
insert_above lib/op/CMakeLists.txt "$marker_ops" "$family/$stem.cc"
insert_above lib/op/CMakeLists.txt "$marker_gpu" "cuda/${stem}_gpu.cu"
insert_above tests/CMakeLists.txt "$marker_ops" "$stem"
insert_above lib/onnx/unexported_ops.cc "$marker_ops" \
  "{\"$name\", \"no export rule yet (scaffolded)\"},"
cat >>"$root/$fixture_py" <<EOF
# $name (scripts/new-op.sh): MXNet's values for it, once MXNet has the
# operator (make_op_fixtures.py refuses names MXNet does not know); then
# check them in tests/op/test_ops_$stem.cc with load_reference_cases("$family").
# CASES += [
#     dict(id="$stem", op="$name", attrs=dict(scale=2.0, shift=0.5), inputs=[r(3, 4)]),
# ]
EOF

# --- report ----------------------------------------------------------------------------
echo "new-op.sh: scaffolded operator $name (family $family, file stem $stem) in $root"
echo "created:"
printf '  %s\n' "${created[@]}"
echo "edited:"
printf '  %s\n' "${edited[@]}"
cat <<EOF
next steps:
  1. Write $name's real parameters, shape inference and kernels:
       $op_cc (declaration, CPU kernels)
       $kernels_h (per-element functors)
       $gpu_h, $gpu_cu (GPU kernels)
     and its checks in $test_cc.
  2. Build and test it:
       cmake --build build
       (cd build && ctest -R 'test_ops_$stem|test_op_coverage|test_onnx\$|gpu_kernel_coverage')
  3. Reference values from MXNet 1.9.1, where MXNet has the operator: add its
     cases to $fixture_py (a commented placeholder is at
     its end) and run
       python scripts/fixtures/make_op_fixtures.py $family
     in a virtual environment with mxnet==1.9.1 (scripts/fixtures/README.md);
     commit tests/fixtures/ops/$family.params and .cases with it.
  4. ONNX: write an export rule (lib/onnx/export_ops.cc) and remove $name's
     line from lib/onnx/unexported_ops.cc, or give the real reason there.
  5. Regenerate the operator list (a build with CUDA and oneDNN):
       cmake --build build --target mx-ops && MX_BUILD_DIR=build scripts/gen_operator_docs.sh
EOF

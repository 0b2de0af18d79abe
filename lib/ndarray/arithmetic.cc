// NDArray's arithmetic operators: each pushes one element-wise kernel.
#include "base/error.h"
#include "ndarray/elementwise.h"
#include "ndarray/ndarray.h"

namespace mx {
namespace {

const char* binary_name(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd: return "elemwise_add";
    case BinaryOp::kSub: return "elemwise_sub";
    case BinaryOp::kMul: return "elemwise_mul";
    case BinaryOp::kDiv: return "elemwise_div";
  }
  return "elemwise";
}

const char* scalar_name(ScalarOp op) {
  switch (op) {
    case ScalarOp::kAdd: return "_plus_scalar";
    case ScalarOp::kSub: return "_minus_scalar";
    case ScalarOp::kRSub: return "_rminus_scalar";
    case ScalarOp::kMul: return "_mul_scalar";
    case ScalarOp::kDiv: return "_div_scalar";
    case ScalarOp::kRDiv: return "_rdiv_scalar";
  }
  return "scalar";
}

void check_operands(const char* name, const NDArray& a, const NDArray& b) {
  if (a.is_none() || b.is_none()) throw Error(str(name, ": operand is a none array"));
  if (a.shape() != b.shape() || a.dtype() != b.dtype() || a.ctx() != b.ctx())
    throw Error(str(name, ": operands differ: ", a.describe(), " and ", b.describe()));
}

// out = a (op) b; out may be a itself.
void push_binary(BinaryOp op, const NDArray& a, const NDArray& b, const NDArray& out) {
  check_operands(binary_name(op), a, b);
  Engine::get().push(
      [op, a, b, out](RunContext rctx) {
        if (rctx.ctx.is_gpu())
          binary_kernel_gpu(op, a.dtype(), a.raw_data(), b.raw_data(), out.raw_data(), a.size(),
                            rctx.stream);
        else
          binary_kernel_cpu(op, a.dtype(), a.raw_data(), b.raw_data(), out.raw_data(), a.size());
      },
      a.ctx(), {a.var(), b.var()}, {out.var()}, FnProperty::kNormal, 0, binary_name(op));
}

void push_scalar(ScalarOp op, const NDArray& a, double s, const NDArray& out) {
  if (a.is_none()) throw Error(str(scalar_name(op), ": operand is a none array"));
  Engine::get().push(
      [op, a, s, out](RunContext rctx) {
        if (rctx.ctx.is_gpu())
          scalar_kernel_gpu(op, a.dtype(), a.raw_data(), s, out.raw_data(), a.size(), rctx.stream);
        else
          scalar_kernel_cpu(op, a.dtype(), a.raw_data(), s, out.raw_data(), a.size());
      },
      a.ctx(), {a.var()}, {out.var()}, FnProperty::kNormal, 0, scalar_name(op));
}

NDArray binary(BinaryOp op, const NDArray& a, const NDArray& b) {
  check_operands(binary_name(op), a, b);
  NDArray out(a.shape(), a.ctx(), a.dtype());
  push_binary(op, a, b, out);
  return out;
}

NDArray scalar(ScalarOp op, const NDArray& a, double s) {
  if (a.is_none()) throw Error(str(scalar_name(op), ": operand is a none array"));
  NDArray out(a.shape(), a.ctx(), a.dtype());
  push_scalar(op, a, s, out);
  return out;
}

}  // namespace

NDArray operator+(const NDArray& a, const NDArray& b) { return binary(BinaryOp::kAdd, a, b); }
NDArray operator-(const NDArray& a, const NDArray& b) { return binary(BinaryOp::kSub, a, b); }
NDArray operator*(const NDArray& a, const NDArray& b) { return binary(BinaryOp::kMul, a, b); }
NDArray operator/(const NDArray& a, const NDArray& b) { return binary(BinaryOp::kDiv, a, b); }

NDArray& operator+=(NDArray& a, const NDArray& b) {
  push_binary(BinaryOp::kAdd, a, b, a);
  return a;
}
NDArray& operator-=(NDArray& a, const NDArray& b) {
  push_binary(BinaryOp::kSub, a, b, a);
  return a;
}
NDArray& operator*=(NDArray& a, const NDArray& b) {
  push_binary(BinaryOp::kMul, a, b, a);
  return a;
}
NDArray& operator/=(NDArray& a, const NDArray& b) {
  push_binary(BinaryOp::kDiv, a, b, a);
  return a;
}

NDArray operator+(const NDArray& a, double s) { return scalar(ScalarOp::kAdd, a, s); }
NDArray operator-(const NDArray& a, double s) { return scalar(ScalarOp::kSub, a, s); }
NDArray operator*(const NDArray& a, double s) { return scalar(ScalarOp::kMul, a, s); }
NDArray operator/(const NDArray& a, double s) { return scalar(ScalarOp::kDiv, a, s); }
NDArray operator+(double s, const NDArray& a) { return scalar(ScalarOp::kAdd, a, s); }
NDArray operator-(double s, const NDArray& a) { return scalar(ScalarOp::kRSub, a, s); }
NDArray operator*(double s, const NDArray& a) { return scalar(ScalarOp::kMul, a, s); }
NDArray operator/(double s, const NDArray& a) { return scalar(ScalarOp::kRDiv, a, s); }

NDArray& operator+=(NDArray& a, double s) {
  push_scalar(ScalarOp::kAdd, a, s, a);
  return a;
}
NDArray& operator-=(NDArray& a, double s) {
  push_scalar(ScalarOp::kSub, a, s, a);
  return a;
}
NDArray& operator*=(NDArray& a, double s) {
  push_scalar(ScalarOp::kMul, a, s, a);
  return a;
}
NDArray& operator/=(NDArray& a, double s) {
  push_scalar(ScalarOp::kDiv, a, s, a);
  return a;
}

}  // namespace mx

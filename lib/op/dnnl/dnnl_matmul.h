// bfloat16 products on the CPU (dot, batch_dot, and RNN's in rnn_driver.h):
// oneDNN's matmul with float32 sums, on mx's row-major operands where they
// lie (a transposed operand is a strided view, not a copy), one primitive
// per shape. Only compiled with MX_USE_DNNL.
#pragma once

#include "op/cuda/gemm_args.h"
#include "op/resources.h"
#include "op/tensor_ref.h"

namespace mx::op::dnnl_impl {

// `s.batch` products C = op(A) op(B) of the row-major product `g`, their
// operands s.a, s.b and s.c elements apart; bfloat16 operands and result.
// req: write (inplace) overwrites C, add adds to it, null does nothing.
void matmul_bf16(const cuda::RowMajorGemm& g, const cuda::BatchStrides& s, const void* a,
                 const void* b, void* c, OpReq req, const OpResources& res);

}  // namespace mx::op::dnnl_impl

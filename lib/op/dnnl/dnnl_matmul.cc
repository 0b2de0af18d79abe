#include "op/dnnl/dnnl_matmul.h"

#include "op/dnnl/dnnl_context.h"

namespace mx::op::dnnl_impl {
namespace {

// op(X) as a (batch, rows, cols) bfloat16 array: X lies row-major with row
// stride `ld` (rows x cols, or cols x rows when transposed), `stride`
// elements between the matrices of a batch.
dnnl::memory::desc operand(int64_t batch, int64_t rows, int64_t cols, bool trans, int64_t ld,
                           int64_t stride) {
  // A single product's batch stride is its matrix's span: oneDNN takes a
  // 0 there for a layout of its own and falls back to its reference kernel.
  if (batch == 1) stride = (trans ? cols : rows) * ld;
  const dims strides = trans ? dims{stride, 1, ld} : dims{stride, ld, 1};
  return dnnl::memory::desc({batch, rows, cols}, dnnl::memory::data_type::bf16, strides);
}

}  // namespace

void matmul_bf16(const cuda::RowMajorGemm& g, const cuda::BatchStrides& s, const void* a,
                 const void* b, void* c, OpReq req, const OpResources& res) {
  if (req == OpReq::kNull) return;
  const dnnl::memory::desc a_md = operand(s.batch, g.m, g.k, g.trans_a, g.lda, s.a);
  const dnnl::memory::desc b_md = operand(s.batch, g.k, g.n, g.trans_b, g.ldb, s.b);
  const dnnl::memory::desc c_md = operand(s.batch, g.m, g.n, false, g.ldc, s.c);
  auto step = cached_step(
      make_key("matmul_bf16", g.trans_a, g.trans_b, g.m, g.n, g.k, g.lda, g.ldb, g.ldc, s.batch,
               s.a, s.b, s.c),
      [&] {
        const dnnl::matmul::desc desc(a_md, b_md, c_md);
        const dnnl::matmul::primitive_desc pd(desc, scratch_attr(), cpu_engine());
        return make_step(
            dnnl::matmul(pd), pd,
            {{DNNL_ARG_SRC, a_md}, {DNNL_ARG_WEIGHTS, b_md}, {DNNL_ARG_DST, c_md, true}});
      });
  run(*step, {a, b, c}, {OpReq::kNull, OpReq::kNull, req}, res);
}

}  // namespace mx::op::dnnl_impl

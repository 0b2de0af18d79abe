// The registry's operators that ONNX export refuses, each with the reason
// mx-export gives. Every operator of the registry has either an export rule
// (export_ops.cc, export_sequence.cc) or an entry here, and
// tests/onnx/test_onnx_coverage.cc fails when one has neither (or both), so a new
// operator cannot be forgotten silently.
#include <map>
#include <string>

#include "onnx/export.h"

namespace mx::onnx {

const std::map<std::string, std::string>& unexported_operators() {
  static const std::map<std::string, std::string> ops{
      // Sequence-length operators: ONNX's ReverseSequence, and a mask made of
      // Range and Less, could express them; no rule is written yet.
      {"SequenceLast", "no export rule yet (sequence lengths)"},
      {"SequenceMask", "no export rule yet (sequence lengths)"},
      {"SequenceReverse", "no export rule yet (ONNX's ReverseSequence takes lengths as int64)"},
      // Shapes computed from parameters at export time would fit Range,
      // Expand, Tile, ConstantOfShape; no rule is written yet.
      {"_arange", "no export rule yet (ONNX's Range)"},
      {"_contrib_arange_like", "no export rule yet (ONNX's Range of a shape)"},
      {"broadcast_axis", "no export rule yet (ONNX's Expand)"},
      {"broadcast_like", "no export rule yet (ONNX's Expand of a shape)"},
      {"broadcast_to", "no export rule yet (ONNX's Expand)"},
      {"ones_like", "no export rule yet (ONNX's ConstantOfShape)"},
      {"zeros_like", "no export rule yet (ONNX's ConstantOfShape)"},
      {"repeat", "no export rule yet (Unsqueeze, Tile and Reshape)"},
      {"tile", "no export rule yet (ONNX's Tile)"},
      {"stack", "no export rule yet (Unsqueeze and Concat)"},
      {"slice", "no export rule yet (ONNX's Slice; MXNet's None bounds and steps)"},
      // Index operators whose MXNet semantics differ from ONNX's: float
      // indices, clipping or wrapping of out-of-range ones, gather_nd's index
      // axis first where GatherND has it last.
      {"take", "no export rule yet (Gather of clipped int64 indices)"},
      {"gather_nd", "no export rule yet (GatherND reads the index axis last)"},
      {"one_hot", "no export rule yet (ONNX's OneHot)"},
      {"topk", "no export rule yet (ONNX's TopK; MXNet's ret_typ and float indices)"},
      {"where", "no export rule yet (ONNX's Where of a BOOL condition)"},
      {"norm", "no export rule yet (ReduceL1/ReduceL2)"},
      // The encoder-decoder attention products: only the self-attention pair
      // is exported (export_sequence.cc).
      {"_contrib_interleaved_matmul_encdec_qk", "no export rule yet (encoder-decoder attention)"},
      {"_contrib_interleaved_matmul_encdec_valatt",
       "no export rule yet (encoder-decoder attention)"},
      // Training-time precision casts: an exported model is float32.
      {"amp_cast", "mixed-precision casts are training-time only; export a float32 model"},
      {"amp_multicast", "mixed-precision casts are training-time only; export a float32 model"},
      {"all_finite", "a training-time check of gradients (mixed precision); ONNX has no such node"},
      {"multi_all_finite",
       "a training-time check of gradients (mixed precision); ONNX has no such node"},
      // scripts/new-op.sh adds new operators above this line.
  };
  return ops;
}

}  // namespace mx::onnx

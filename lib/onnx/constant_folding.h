// Import-time evaluation of the shape arithmetic exporters write (internal
// to lib/onnx). torch.onnx.export builds a zero begin state of (L*D, N, H)
// from Shape(x) -> Gather -> Unsqueeze -> Concat -> Expand; where the input
// shapes are static these are constants, and folding them lets the
// importer see constant states and shapes instead of operators mx has no
// graph equivalent for (Shape, Expand of a computed shape).
#pragma once

#include "onnx/import_ops.h"

namespace mx::onnx {

// When `n`'s outputs can be computed now (Shape of a tensor of static shape;
// Gather, Unsqueeze, Squeeze, Concat, Expand or Cast of constants), stores
// them in c.constants and returns true.
bool fold_constant(ImportContext& c, const ImportNode& n);

}  // namespace mx::onnx

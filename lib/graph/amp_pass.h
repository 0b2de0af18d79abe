// The AMP graph pass: a copy of a float32 network in which operators run in a
// low precision (bfloat16, float16) as each declares with OpBuilder::amp
// (op/amp_class.h), joined by MXNet's amp_cast and amp_multicast nodes, so
// that the converted graph stays readable by MXNet 1.9.1. Variables (master
// weights, data, labels) stay float32; a low-precision operator reads them
// through an amp_cast, whose gradient is cast back to float32.
#pragma once

#include "base/context.h"
#include "base/dtype.h"
#include "graph/symbol.h"

namespace mx::graph {

// `target`: kBFloat16 or kFloat16. The outputs of the converted graph are
// float32 where the network's were (a low-precision head is cast back).
// `device`: where it will run; on the CPU an operator's amp_class_on_cpu,
// where it declares one, replaces its class.
Symbol convert_to_mixed_precision(const Symbol& network, DType target, DeviceKind device);

}  // namespace mx::graph

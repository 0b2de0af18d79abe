// The RNN operator (op/nn/rnn.cc) on oneDNN's RNN primitives, float32:
// lstm_forward/backward (with projection), lbr_gru_forward/backward
// (MXNet's GRU resets after the h-side product, oneDNN's "linear before
// reset") and vanilla_rnn_forward/backward (ReLU, tanh). A call runs one
// primitive per group of layers (rnn_groups) and keeps what the backward
// pass needs in the operator's 'workspace' output (RnnWorkspace).
//
// The flat parameter vector is gathered into oneDNN's layouts (gates
// reordered, biases joined) once per content of the array (ContentStamp,
// as the convolution's weights in inference), per pass; the weight
// gradients come back from oneDNN's layouts into MXNet's flat vector.
//
// Not taken (the caller runs rnn_driver.h): sequence lengths and cell
// clipping, which oneDNN's primitives do not have.
#pragma once

#include <cstdint>
#include <vector>

#include "op/nn/rnn_param.h"
#include "op/op_def.h"

namespace mx::op::dnnl_impl {

// Whether the oneDNN path takes a call with these parameters (in float32).
bool rnn_supported(const RnnParam& p);

// Layers [first, first + count) run by one primitive, all of input width
// `input` (I for layer 0, D*P above). Stacked layers must read as many
// channels as they write (oneDNN's rule), so layer 0 runs alone when
// I != P; bidirectional layers, and those with dropout between them in
// training, run one per primitive.
struct RnnGroup {
  int64_t first = 0, count = 1, input = 0;
};
std::vector<RnnGroup> rnn_groups(const RnnGeometry& g, bool training);

// Float32 elements of the 'workspace' output the oneDNN path writes (in
// training, which needs the most), from oneDNN's primitive descriptors.
int64_t rnn_workspace_size(const RnnParam& p, const RnnGeometry& g);

// The operator's passes; false when oneDNN does not take the case.
bool rnn_forward(const RnnParam& p, const ForwardCall& c);
bool rnn_backward(const RnnParam& p, const BackwardCall& c);

// How many times a parameter vector was gathered into oneDNN's layouts and
// kept (tests check that the same content is gathered once).
uint64_t rnn_weight_packs_made();

}  // namespace mx::op::dnnl_impl

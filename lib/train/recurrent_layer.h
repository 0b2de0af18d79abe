// The network language's recurrent layer: MXNet's RNN operator plus what a
// YAML layer `op: RNN` may add around it (docs/sequence-models.md):
//   layout: TNC (default, the operator's) or NTC (batch first: the input is
//     transposed to TNC and the output back, as Gluon's layout='NTC' does);
//   begin_state: zeros (default: each call starts from zero states, made by
//     MXNet's _zeros, as Gluon's exports do) or carry (the states are
//     network inputs LAYER_begin_state[_cell] that take the layer's final
//     states after every batch: truncated BPTT; carried_states.h).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "graph/symbol.h"

namespace mx::train {

struct RecurrentLayer {
  graph::Symbol output;                // the layer's output in its layout
  graph::Symbol rnn;                   // the RNN node (its outputs: output, states)
  std::vector<graph::Symbol> carried;  // heads to add to the network's outputs
};

// Builds layer `name` from its attributes (the operator's, plus layout and
// begin_state, which this takes out) on `data`. `where` names the layer in
// errors.
RecurrentLayer build_recurrent_layer(const std::string& name,
                                     std::map<std::string, std::string> attrs,
                                     const graph::Symbol& data, const std::string& where);

}  // namespace mx::train

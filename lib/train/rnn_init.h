// Initial values of the RNN layers' flat parameter vectors, as MXNet's
// FusedRNN initializer gives them: every weight matrix of every layer and
// direction (Wx, Wh, and Whr with a projection) filled by the configured
// initializer as the matrix it is (so Xavier sees its fan-in and fan-out,
// and each matrix draws from its own name), every bias 0 but an LSTM's
// forget-gate input bias, 1 (forget_bias), which keeps early gradients alive.
#pragma once

#include <string>
#include <vector>

#include "executor/executor.h"
#include "graph/symbol.h"
#include "optim/initializer.h"

namespace mx::train {

// Fills the `parameters` input of every RNN node of `network` that is a
// variable; returns their names (the caller initializes the rest).
std::vector<std::string> initialize_rnn_parameters(const graph::Symbol& network,
                                                   const Executor& exe,
                                                   const optim::Initializer& init);

}  // namespace mx::train

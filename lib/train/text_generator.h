// Generation with a language model checkpoint (mx-predict --generate): the
// prompt is fed token by token, then each next token is sampled from the
// model's distribution for the last position (softmax of its log
// probabilities divided by the temperature, restricted to the top_k most
// likely when top_k > 0), seeded, and written out as soon as it is drawn.
// A model whose recurrent states are carried (begin_state: carry,
// carried_states.h) runs one token per step from its states; any other
// model (zero begin states, attention) is run on the whole context every
// step (the last `context` tokens: by default as many as the windows it was
// trained on, so that a model with learned positions never sees more).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

#include "io/vocabulary.h"
#include "train/predictor.h"

namespace mx::train {

struct GenerateOptions {
  int tokens = 100;          // how many to generate after the prompt
  std::string prompt;        // UTF-8 text, tokenized as the vocabulary's tokens are
  double temperature = 1.0;  // > 0; below 1 sharper, above 1 flatter
  int top_k = 0;             // 0: all tokens
  uint64_t seed = 0;
  // Tokens a model without carried states sees; 0: the run's
  // data.train.seq_len (a text iterator's windows), else 256.
  int context = 0;
};

// The vocabulary of a run's text data: the .vocab beside the config's
// data.train path_rec (mx-pack text writes it), or `explicit_path`.
Vocabulary generation_vocabulary(const Predictor& model,
                                 const std::optional<std::string>& explicit_path);

// Writes the prompt and then the generated text to `out`, flushing after
// every token. InputError for options out of range or a model whose output
// is not one distribution per position over the vocabulary.
void generate_text(const Predictor& model, const Vocabulary& vocabulary,
                   const GenerateOptions& options, std::ostream& out);

}  // namespace mx::train

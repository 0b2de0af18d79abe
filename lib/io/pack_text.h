// mx-pack text: UTF-8 text files become a token file (token_records.h) and
// its vocabulary (vocabulary.h) for language models. Files are cut into
// documents and documents into tokens (text_tokens.h); each document's ids
// are followed by the end token's, so documents stay apart in the stream.
#pragma once

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace mx {

struct PackTextOptions {
  // Files, or folders whose regular files (not links, not hidden, not
  // matching `exclude`) are read in name order.
  std::vector<std::string> inputs;
  std::vector<std::string> exclude;  // glob patterns of file names in folders
  std::string prefix;  // PREFIX.rec/.idx/.vocab; PREFIX_train.*, PREFIX_val.* with val_ratio
  std::string tokens = "char";      // "char" (code points) or "word" (whitespace-separated)
  std::string vocab;                // an existing vocabulary to use instead of building one
  size_t max_vocab = 0;             // most tokens in the vocabulary, special ones included; 0: all
  std::optional<std::string> unk;   // the unknown token (id 0); default "<unk>"
  std::string end_token = "<eos>";  // after each document; "" for none
  std::optional<std::string> record_separator;  // documents end at lines equal to this
  bool line_records = false;                    // every line is a document
  double val_ratio = 0;                         // documents for PREFIX_val, spread evenly
  size_t record_tokens = 16384;                 // most ids in one record
};

// Packs the text and prints what was written on `out`. Bad options and bad
// text throw InputError (naming the file and byte offset); nothing is
// written unless everything is.
void pack_text(const PackTextOptions& options, std::ostream& out);

}  // namespace mx

// TextIter: language-model batches from a token file (mx-pack text), cut as
// PyTorch's and Gluon-NLP's batchify cut a corpus for truncated BPTT.
//
// The file's token stream (token_records.h) is split into num_parts
// contiguous parts; worker k takes part k, of L tokens. Its first
// B * M tokens, M = floor((L - 1) / B), form B streams: stream b is tokens
// [b*M, (b+1)*M). Batch i holds in row b the seq_len (T) tokens of stream b
// starting at o + i*T (o: the epoch's offset, 0 unless random_offset), and
// its label the token after each of them. Row b of batch i+1 goes on where
// row b of batch i ended, so a model can carry its hidden state over. An
// epoch has floor(M / T) batches (floor((M - T + 1) / T) with random_offset,
// whose offset o in [0, T) is drawn anew each epoch from (seed, epoch));
// the tail of each stream that does not fill a batch is left out.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/param.h"
#include "io/data_iter.h"
#include "io/vocabulary.h"

namespace mx {

struct TextIterParam : Params<TextIterParam> {
  std::string path_rec;
  std::string path_vocab;
  int seq_len = 35;
  int batch_size = 32;
  bool random_offset = false;
  int seed = 0;
  int num_parts = 1, part_index = 0;
  bool silent = false;

  static void declare(ParamDecl<TextIterParam>& d);
};

class TextIter final : public DataIter {
 public:
  explicit TextIter(const TextIterParam& param);

  std::optional<DataBatch> next() override;
  void reset() override;
  Shape data_shape() const override { return Shape{param_.batch_size, param_.seq_len}; }
  Shape label_shape() const override { return data_shape(); }
  std::optional<int64_t> batches_per_epoch() const override {
    return static_cast<int64_t>(batches_);
  }

  const Vocabulary& vocabulary() const { return vocabulary_; }
  size_t vocab_size() const { return vocabulary_.size(); }
  const std::string& vocab_path() const { return vocab_path_; }
  // Tokens in the whole file, in this worker's part, and in each stream (M).
  uint64_t file_tokens() const { return file_tokens_; }
  uint64_t part_tokens() const { return part_.size(); }
  uint64_t stream_tokens() const { return stream_tokens_; }
  // Where the current epoch's batches start in each stream (o).
  uint64_t epoch_offset() const { return offset_; }

 private:
  void start_epoch();

  TextIterParam param_;
  std::string vocab_path_;
  Vocabulary vocabulary_;
  uint64_t file_tokens_ = 0;
  uint64_t part_begin_ = 0;  // where part_[0] stands in the file's stream
  std::vector<float> part_;  // the ids of this worker's part
  uint64_t stream_tokens_ = 0, batches_ = 0;
  uint64_t epoch_ = 0, batch_ = 0, offset_ = 0;
};

}  // namespace mx

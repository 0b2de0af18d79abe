#include "io/text_iter.h"

#include <cstring>

#include "base/logging.h"
#include "io/epoch_order.h"
#include "io/random.h"
#include "io/recordio_errors.h"
#include "io/token_records.h"

namespace mx {

void TextIterParam::declare(ParamDecl<TextIterParam>& d) {
  using P = TextIterParam;
  d.field("path_rec", &P::path_rec).describe("the token .rec written by mx-pack text");
  d.field("path_vocab", &P::path_vocab)
      .set_default("")
      .describe(
          "its vocabulary (default: the .rec's name with .vocab, or PREFIX.vocab for "
          "PREFIX_train.rec and PREFIX_val.rec)");
  d.field("seq_len", &P::seq_len)
      .set_default(35)
      .set_lower_bound(1)
      .describe("time steps per batch (truncated BPTT length)");
  d.field("batch_size", &P::batch_size)
      .set_default(32)
      .set_lower_bound(1)
      .describe("parallel streams the text is cut into (rows of a batch)");
  d.field("random_offset", &P::random_offset)
      .set_default(false)
      .describe("start each epoch's batches at a random offset in [0, seq_len) of the streams");
  d.field("seed", &P::seed).set_default(0).describe("seed of the random offsets");
  declare_shard_fields(d);
  d.field("silent", &P::silent).set_default(false).describe("do not log what was loaded");
}

TextIter::TextIter(const TextIterParam& param) : param_(param) {
  const std::string owner = "TextIter '" + param_.path_rec + "'";
  if (param_.part_index >= param_.num_parts)
    throw InputError(str(owner, ": part_index ", param_.part_index, " must be below num_parts ",
                         param_.num_parts));
  auto source = with_recordio_errors([&] { return recordio::open_file(param_.path_rec); });
  vocab_path_ =
      param_.path_vocab.empty() ? vocabulary_path_for(param_.path_rec) : param_.path_vocab;
  vocabulary_ = read_vocabulary(vocab_path_);
  const TokenFileLayout layout = scan_token_file(source);
  file_tokens_ = layout.tokens;
  const auto k = static_cast<uint64_t>(param_.part_index);
  const auto n = static_cast<uint64_t>(param_.num_parts);
  part_begin_ = file_tokens_ * k / n;
  const uint64_t part_end = file_tokens_ * (k + 1) / n;
  const std::vector<int32_t> ids =
      read_tokens(source, layout, part_begin_, part_end, vocabulary_.size());
  part_.assign(ids.begin(), ids.end());

  const auto B = static_cast<uint64_t>(param_.batch_size);
  const auto T = static_cast<uint64_t>(param_.seq_len);
  stream_tokens_ = part_.empty() ? 0 : (part_.size() - 1) / B;
  const uint64_t usable = param_.random_offset ? stream_tokens_ + 1 : stream_tokens_ + T;
  batches_ = usable >= T ? usable / T - 1 : 0;
  if (batches_ == 0)
    throw InputError(
        str(owner, ": part ", k, " of ", n, " holds ", part_.size(), " tokens (of ", file_tokens_,
            "), so each of the batch_size ", B, " streams holds ", stream_tokens_, ", fewer than ",
            param_.random_offset ? str("2 * seq_len - 1 = ", 2 * T - 1, " (random_offset)")
                                 : str("seq_len ", T),
            "; lower batch_size or seq_len"));
  if (!param_.silent) {
    MX_LOG(kInfo) << "TextIter: " << file_tokens_ << " tokens from " << param_.path_rec << " ("
                  << vocabulary_.size() << "-token vocabulary " << vocab_path_ << "); part " << k
                  << " of " << n << ": " << B << " streams of " << stream_tokens_ << ", "
                  << batches_ << " batches of " << T;
  }
  start_epoch();
}

void TextIter::start_epoch() {
  batch_ = 0;
  offset_ = 0;
  if (param_.random_offset)
    offset_ = Rng::derive({static_cast<uint64_t>(param_.seed), epoch_})
                  .uniform(static_cast<uint64_t>(param_.seq_len));
}

std::optional<DataBatch> TextIter::next() {
  if (batch_ >= batches_) return std::nullopt;
  const auto B = static_cast<size_t>(param_.batch_size);
  const auto T = static_cast<size_t>(param_.seq_len);
  std::vector<float> data(B * T), label(B * T);
  DataBatch out;
  out.index.resize(B);
  for (size_t b = 0; b < B; ++b) {
    const uint64_t start = b * stream_tokens_ + offset_ + batch_ * T;
    std::memcpy(&data[b * T], &part_[start], T * sizeof(float));
    std::memcpy(&label[b * T], &part_[start + 1], T * sizeof(float));
    out.index[b] = part_begin_ + start;
  }
  ++batch_;
  out.data = NDArray::from_vector(data_shape(), std::move(data));
  out.label = NDArray::from_vector(label_shape(), std::move(label));
  return out;
}

void TextIter::reset() {
  ++epoch_;
  start_epoch();
}

}  // namespace mx

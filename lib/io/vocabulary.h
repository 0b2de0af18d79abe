// The vocabulary of a token file (PREFIX.vocab beside PREFIX.rec): the
// tokens in id order, id 0 the unknown token. The file holds one token per
// line, UTF-8, with backslash escapes for what a line cannot hold:
//   \\ backslash   \n newline   \t tab   \r carriage return   \s space
//   \xHH another ASCII control character (00..1f, 7f)
// Any other backslash sequence, an empty line or a repeated token is an
// error naming the line.
#pragma once

#include <array>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace mx {

// The most tokens a vocabulary may hold: ids up to 2^24 are exact in the
// float32 batches of TextIter.
inline constexpr size_t kMaxVocabulary = size_t{1} << 24;

class Vocabulary {
 public:
  Vocabulary() = default;
  // Tokens in id order, at least one (the unknown token), none repeated.
  explicit Vocabulary(std::vector<std::string> tokens);

  size_t size() const { return tokens_.size(); }
  const std::vector<std::string>& tokens() const { return tokens_; }
  const std::string& token(size_t id) const { return tokens_.at(id); }
  const std::string& unknown() const { return tokens_.at(0); }
  // The id of `token`, or nullopt when it is not in the vocabulary.
  std::optional<int32_t> find(std::string_view token) const;
  // The id of `token`, or 0 (the unknown token's).
  int32_t id(std::string_view token) const {
    if (token.size() == 1 && static_cast<unsigned char>(token[0]) < 0x80)
      return ascii_[static_cast<unsigned char>(token[0])];
    const auto found = ids_.find(token);
    return found == ids_.end() ? 0 : found->second;
  }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int32_t, Hash, std::equal_to<>> ids_;
  std::array<int32_t, 128> ascii_{};  // ids of one-byte tokens; 0 where absent
};

std::string escape_token(std::string_view token);

// Parses the text of a vocabulary file; InputError "NAME:LINE: ..." for bad
// escapes, empty lines, repeated tokens and a line past `max_tokens`
// (`limit` says where the limit comes from, e.g. "--max-vocab 1000").
Vocabulary parse_vocabulary(std::string_view text, const std::string& name,
                            size_t max_tokens = kMaxVocabulary, const std::string& limit = "");
Vocabulary read_vocabulary(const std::string& path, size_t max_tokens = kMaxVocabulary,
                           const std::string& limit = "");
void write_vocabulary(std::ostream& out, const Vocabulary& vocabulary);

// Counts tokens in the order they first appear, for building a vocabulary.
// Keys are views: the text they point into must outlive the counter.
class TokenCounter {
 public:
  void add(std::string_view token) {
    if (token.size() == 1 && static_cast<unsigned char>(token[0]) < 0x80) {
      Entry& e = ascii_[static_cast<unsigned char>(token[0])];
      if (e.count++ == 0) e.first = next_++;
      return;
    }
    auto [it, inserted] = counts_.try_emplace(token);
    if (inserted) it->second.first = next_++;
    ++it->second.count;
  }

  struct Counted {
    std::string_view token;
    uint64_t count = 0;
    uint64_t first = 0;  // order of first appearance
  };
  // Every token counted, in order of first appearance.
  std::vector<Counted> counted() const;

 private:
  struct Entry {
    uint64_t count = 0, first = 0;
  };
  std::unordered_map<std::string_view, Entry> counts_;
  std::array<Entry, 128> ascii_{};
  uint64_t next_ = 0;
};

// `special` (the unknown token first, then e.g. the end token) at ids 0, 1,
// ..., then the counted tokens by falling count, ties by first appearance,
// as many as fit in `max_size` (0: all). Counted tokens equal to a special
// one keep the special one's id.
Vocabulary build_vocabulary(const TokenCounter& counter, const std::vector<std::string>& special,
                            size_t max_size);

}  // namespace mx

// Feeds arbitrary bytes to the readers of token files (mx-pack text,
// TextIter): the vocabulary parser and the token-record reader must return
// or throw InputError naming the file, never crash, hang or allocate more
// than the input holds; and the text cutter must give tokens that are
// pieces of their documents. The first byte is the vocabulary size the ids
// are checked against (1 + byte); the rest is the content.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "base/error.h"
#include "io/text_tokens.h"
#include "io/token_records.h"
#include "io/utf8.h"
#include "io/vocabulary.h"
#include "recordio/byte_source.h"

namespace {

// A vocabulary that parses writes back to text that parses to the same tokens.
void check_vocabulary(const std::string& content) {
  mx::Vocabulary vocabulary;
  try {
    vocabulary = mx::parse_vocabulary(content, "fuzz.vocab", 1000);
  } catch (const mx::InputError&) {
    return;
  }
  std::string written;
  for (const auto& token : vocabulary.tokens()) written += mx::escape_token(token) + "\n";
  if (mx::parse_vocabulary(written, "again.vocab").tokens() != vocabulary.tokens())
    __builtin_trap();
  for (size_t id = 0; id < vocabulary.size(); ++id)
    if (vocabulary.id(vocabulary.token(id)) != static_cast<int32_t>(id)) __builtin_trap();
}

void check_token_file(const std::string& content, uint64_t vocab_size) {
  auto source = std::make_shared<recordio::MemorySource>(content, "fuzz.rec");
  try {
    const mx::TokenFileLayout layout = mx::scan_token_file(source);
    if (layout.tokens > content.size() / 4) __builtin_trap();
    const auto ids = mx::read_tokens(source, layout, 0, layout.tokens, vocab_size);
    if (ids.size() != layout.tokens) __builtin_trap();
    for (int32_t id : ids)
      if (id < 0 || static_cast<uint64_t>(id) >= vocab_size) __builtin_trap();
    const uint64_t middle = layout.tokens / 2;
    const auto tail = mx::read_tokens(source, layout, middle, layout.tokens, vocab_size);
    if (!std::equal(tail.begin(), tail.end(), ids.begin() + static_cast<std::ptrdiff_t>(middle)))
      __builtin_trap();
  } catch (const mx::InputError&) {
  }
}

// Char tokens put back together are the document; words hold no whitespace.
void check_tokens(const std::string& content) {
  if (mx::utf8::find_invalid(content)) return;
  mx::for_each_document(content, {"%", false}, [](std::string_view document) {
    std::string joined;
    mx::for_each_token(document, mx::TokenKind::kChar, [&](std::string_view t) { joined += t; });
    if (joined != document) __builtin_trap();
    mx::for_each_token(document, mx::TokenKind::kWord, [](std::string_view word) {
      if (word.empty()) __builtin_trap();
      for (size_t pos = 0, length = 0; pos < word.size(); pos += length)
        if (mx::utf8::is_space(mx::utf8::decode(word, pos, length))) __builtin_trap();
    });
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string content(reinterpret_cast<const char*>(data) + 1, size - 1);
  check_vocabulary(content);
  check_token_file(content, 1 + uint64_t{data[0]});
  check_tokens(content);
  return 0;
}

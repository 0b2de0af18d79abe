// How mx-pack text reads text: a file is cut into documents (the whole
// file, each line, or the text between separator lines), and a document
// into tokens (Unicode code points, or the words Python's str.split()
// gives). The text must be UTF-8 (utf8.h) before it is cut.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "io/utf8.h"

namespace mx {

enum class TokenKind { kChar, kWord };

struct DocumentSplit {
  // Documents are separated by lines equal to this (the lines dropped)...
  std::optional<std::string> record_separator;
  // ... or each line is a document (without its newline); else the whole file is one.
  bool line_records = false;
};

// File text as it is cut: a leading byte order mark removed and "\r\n" made
// "\n" (lines, separators and char tokens then agree across platforms).
void normalize_text(std::string& text);

// Calls on_document(text) for each document of `text`, in order; documents
// may hold no tokens (the caller drops those).
template <typename Fn>
void for_each_document(std::string_view text, const DocumentSplit& split, Fn&& on_document) {
  if (!split.record_separator && !split.line_records) {
    on_document(text);
    return;
  }
  size_t start = 0, line = 0;  // the current document's and line's first bytes
  while (line < text.size()) {
    const size_t newline = text.find('\n', line);
    const size_t end = newline == std::string_view::npos ? text.size() : newline;
    const size_t next = newline == std::string_view::npos ? text.size() : newline + 1;
    if (split.line_records) {
      on_document(text.substr(line, end - line));
    } else if (text.substr(line, end - line) == *split.record_separator) {
      on_document(text.substr(start, line - start));
      start = next;
    }
    line = next;
  }
  if (!split.line_records && start < text.size()) on_document(text.substr(start));
}

// Calls on_token(token) for each token of `document` (valid UTF-8), in order.
template <typename Fn>
void for_each_token(std::string_view document, TokenKind kind, Fn&& on_token) {
  size_t pos = 0;
  if (kind == TokenKind::kChar) {
    while (pos < document.size()) {
      const size_t length = utf8::sequence_length(static_cast<unsigned char>(document[pos]));
      on_token(document.substr(pos, length));
      pos += length;
    }
    return;
  }
  size_t word = std::string_view::npos;  // where the current word started
  while (pos < document.size()) {
    size_t length = 1;
    const auto byte = static_cast<unsigned char>(document[pos]);
    const char32_t c = byte < 0x80 ? byte : utf8::decode(document, pos, length);
    if (utf8::is_space(c)) {
      if (word != std::string_view::npos) on_token(document.substr(word, pos - word));
      word = std::string_view::npos;
    } else if (word == std::string_view::npos) {
      word = pos;
    }
    pos += length;
  }
  if (word != std::string_view::npos) on_token(document.substr(word));
}

}  // namespace mx

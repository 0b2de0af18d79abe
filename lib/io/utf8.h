// UTF-8 as RFC 3629 defines it (no overlong forms, no surrogates, nothing
// above U+10FFFF): checking text with the byte offset of the first bad byte,
// and stepping through the code points of text already checked.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mx::utf8 {

struct Problem {
  uint64_t offset = 0;  // of the offending byte, from the start of the text
  std::string what;     // "byte 0xff can never appear in UTF-8", ...
};

// The first invalid byte of `text`, or nullopt when all of it is UTF-8.
std::optional<Problem> find_invalid(std::string_view text);

// Throws InputError "NAME: byte N: invalid UTF-8: WHAT" at the first bad byte.
void check(std::string_view text, const std::string& name);

// The bytes of a text file, checked to be UTF-8; InputError naming the file
// when it cannot be read or is not UTF-8.
std::string read_file(const std::string& path);

// Bytes in the character whose first byte is `lead` (of valid UTF-8).
inline size_t sequence_length(unsigned char lead) {
  return lead < 0x80 ? 1 : lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4;
}

// The code point starting at text[pos] (valid UTF-8); `length` gets its bytes.
char32_t decode(std::string_view text, size_t pos, size_t& length);

// What Python's str.isspace() calls whitespace (and str.split() splits at).
bool is_space(char32_t c);

}  // namespace mx::utf8

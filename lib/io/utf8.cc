#include "io/utf8.h"

#include <fstream>

#include "base/error.h"
#include "base/file_util.h"

namespace mx::utf8 {
namespace {

std::string hex(unsigned char byte) {
  static const char kDigits[] = "0123456789abcdef";
  return std::string("0x") + kDigits[byte >> 4] + kDigits[byte & 15];
}

// The allowed range of the second byte after `lead` (Unicode's table 3-7);
// the third and fourth bytes are always 0x80..0xbf.
struct SecondByte {
  unsigned char low = 0x80, high = 0xbf;
  const char* otherwise = nullptr;  // what a byte outside the range means
};

SecondByte second_byte(unsigned char lead) {
  switch (lead) {
    case 0xe0: return {0xa0, 0xbf, "an overlong encoding"};
    case 0xed: return {0x80, 0x9f, "an encoded surrogate (U+D800..U+DFFF)"};
    case 0xf0: return {0x90, 0xbf, "an overlong encoding"};
    case 0xf4: return {0x80, 0x8f, "a code point above U+10FFFF"};
    default: return {};
  }
}

// The problem with the character starting at text[pos], or nullopt; `length`
// gets its bytes when it is valid.
std::optional<Problem> check_character(std::string_view text, size_t pos, size_t& length) {
  const auto lead = static_cast<unsigned char>(text[pos]);
  if (lead >= 0x80 && lead < 0xc0)
    return Problem{pos, "byte " + hex(lead) + " continues a character, but none was started"};
  if (lead == 0xc0 || lead == 0xc1)
    return Problem{pos, "byte " + hex(lead) + " starts an overlong encoding"};
  if (lead > 0xf4) return Problem{pos, "byte " + hex(lead) + " can never appear in UTF-8"};
  length = sequence_length(lead);
  const SecondByte second = second_byte(lead);
  for (size_t i = 1; i < length; ++i) {
    if (pos + i >= text.size())
      return Problem{pos, str("the text ends inside the ", length, "-byte character that byte ",
                              hex(lead), " starts")};
    const auto byte = static_cast<unsigned char>(text[pos + i]);
    const unsigned char low = i == 1 ? second.low : 0x80, high = i == 1 ? second.high : 0xbf;
    if (byte >= low && byte <= high) continue;
    if (i == 1 && second.otherwise != nullptr && byte >= 0x80 && byte <= 0xbf)
      return Problem{pos, str("bytes ", hex(lead), " ", hex(byte), " are ", second.otherwise)};
    return Problem{pos + i, str("byte ", hex(byte), " should continue the character that byte ",
                                hex(lead), " at byte ", pos, " starts (0x80..0xbf)")};
  }
  return std::nullopt;
}

}  // namespace

std::optional<Problem> find_invalid(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    // Runs of ASCII need no decoding.
    if (static_cast<unsigned char>(text[pos]) < 0x80) {
      ++pos;
      continue;
    }
    size_t length = 0;
    if (auto problem = check_character(text, pos, length)) return problem;
    pos += length;
  }
  return std::nullopt;
}

void check(std::string_view text, const std::string& name) {
  if (auto problem = find_invalid(text))
    throw InputError(str(name, ": byte ", problem->offset, ": invalid UTF-8: ", problem->what));
}

std::string read_file(const std::string& path) {
  const uint64_t size = file_size(path);  // names a missing file or a folder
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("cannot open '" + path + "'");
  std::string bytes(static_cast<size_t>(size), '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(size));
  if (static_cast<uint64_t>(in.gcount()) != size)
    throw InputError(str("cannot read '", path, "': ", in.gcount(), " of ", size, " bytes read"));
  check(bytes, path);
  return bytes;
}

char32_t decode(std::string_view text, size_t pos, size_t& length) {
  const auto lead = static_cast<unsigned char>(text[pos]);
  length = sequence_length(lead);
  if (length == 1) return lead;
  char32_t c = lead & (0x7f >> length);
  for (size_t i = 1; i < length; ++i)
    c = (c << 6) | (static_cast<unsigned char>(text[pos + i]) & 0x3f);
  return c;
}

bool is_space(char32_t c) {
  if (c < 0x80) return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20);
  return c == 0x85 || c == 0xa0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 ||
         c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

}  // namespace mx::utf8

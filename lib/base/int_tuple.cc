#include "base/int_tuple.h"

#include <cctype>

#include "base/error.h"

namespace mx {

std::vector<int64_t> parse_int_tuple(const std::string& text, const TupleSyntax& syntax) {
  auto fail = [&](const std::string& why) -> InputError {
    return InputError(str("cannot parse ", syntax.what, " '", text, "': ", why));
  };
  size_t i = 0;
  auto skip_space = [&] {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  };
  skip_space();
  char close = '\0';
  if (i < text.size() && (text[i] == '(' || text[i] == '[')) {
    close = text[i] == '(' ? ')' : ']';
    ++i;
  }
  std::vector<int64_t> values;
  bool expect_number = true;  // after '(' or ','
  for (;;) {
    skip_space();
    if (i == text.size()) {
      if (close != '\0') throw fail(std::string("missing closing '") + close + "'");
      if (!syntax.allow_empty && values.empty() && expect_number) throw fail("no values");
      break;
    }
    const char c = text[i];
    if (close != '\0' && c == close) {
      ++i;
      skip_space();
      if (i != text.size()) throw fail("unexpected text after the closing bracket");
      break;
    }
    if (c == ',') {
      if (expect_number) throw fail(str("empty ", syntax.element));
      expect_number = true;
      ++i;
      continue;
    }
    if (!expect_number) throw fail(str("expected ',' between ", syntax.element, "s"));
    const size_t start = i;
    if (c == '-' || c == '+') ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    const std::string digits = text.substr(start, i - start);
    // MXNet writes 64-bit values with an 'L' suffix in old files.
    if (i < text.size() && (text[i] == 'L' || text[i] == 'l')) ++i;
    if (digits.empty() || digits == "-" || digits == "+")
      throw fail(str("unexpected character '", c, "' at position ", start));
    try {
      values.push_back(std::stoll(digits));
    } catch (const std::exception&) {
      throw fail(str(syntax.element, " '", digits, "' is out of range"));
    }
    if (!syntax.allow_negative && values.back() < -1)
      throw fail(str(syntax.element, " ", digits, " is negative"));
    expect_number = false;
  }
  return values;
}

}  // namespace mx

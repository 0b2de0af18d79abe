// The parser of integer tuples as MXNet writes them, shared by Shape
// (dimensions, -1 for unknown) and the operators' axis parameters (any
// integer, negative axes counting from the end).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mx {

// How a tuple is named in messages and what it may hold.
struct TupleSyntax {
  const char* what;     // "shape": "cannot parse shape '(3,,3)': ..."
  const char* element;  // "dimension": "... empty dimension"
  bool allow_negative;  // otherwise values below -1 (unknown) are rejected
  bool allow_empty;     // "" is the empty tuple (otherwise only "()" is)
};

// "(2, 3)", "[2,3]", "2,3", "(5,)", "5", "()", values with an 'L' suffix
// (old files). Throws InputError naming the text and what is wrong.
std::vector<int64_t> parse_int_tuple(const std::string& text, const TupleSyntax& syntax);

}  // namespace mx

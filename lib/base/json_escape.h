// Escaping of JSON strings for the writers that must produce exact bytes
// (MXNet's symbol JSON, as dmlc's writer spells it) or stream their output.
#pragma once

#include <string>
#include <string_view>

namespace mx {

// `text` escaped for a JSON string (without the quotes): \" \\ \n \t \r,
// other control characters as \u00XX.
std::string json_escape(std::string_view text);

}  // namespace mx

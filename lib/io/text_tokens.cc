#include "io/text_tokens.h"

namespace mx {

void normalize_text(std::string& text) {
  if (text.starts_with("\xef\xbb\xbf")) text.erase(0, 3);
  if (text.find('\r') == std::string::npos) return;
  size_t out = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') continue;
    text[out++] = text[i];
  }
  text.resize(out);
}

}  // namespace mx

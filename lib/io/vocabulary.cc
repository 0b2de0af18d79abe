#include "io/vocabulary.h"

#include <algorithm>
#include <ostream>

#include "base/error.h"
#include "io/utf8.h"
#include "recordio/text_lines.h"

namespace mx {
namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

// The token a line stands for; InputError naming the line for a bad escape.
std::string unescape_line(std::string_view line, const std::string& name, uint64_t number) {
  std::string token;
  token.reserve(line.size());
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] != '\\') {
      token += line[i];
      continue;
    }
    const size_t column = i + 1;
    const auto bad = [&](const std::string& what) {
      return InputError(str(name, ":", number, ": column ", column, ": ", what,
                            " (escapes: \\\\ \\n \\t \\r \\s \\xHH)"));
    };
    if (i + 1 >= line.size()) throw bad("a backslash ends the line");
    const char e = line[++i];
    switch (e) {
      case '\\': token += '\\'; break;
      case 'n': token += '\n'; break;
      case 't': token += '\t'; break;
      case 'r': token += '\r'; break;
      case 's': token += ' '; break;
      case 'x': {
        const bool room = i + 2 < line.size();
        const int high = room ? hex_digit(line[i + 1]) : -1,
                  low = room ? hex_digit(line[i + 2]) : -1;
        if (high < 0 || low < 0) throw bad("\\x needs two hexadecimal digits");
        const auto byte = static_cast<unsigned char>(high * 16 + low);
        if (!is_control(byte))
          throw bad(str("\\x", line.substr(i + 1, 2),
                        " is not an ASCII control character (00..1f, 7f); write it as it is"));
        token += static_cast<char>(byte);
        i += 2;
        break;
      }
      default: throw bad(str("unknown escape \\", std::string(1, e)));
    }
  }
  return token;
}

}  // namespace

Vocabulary::Vocabulary(std::vector<std::string> tokens) : tokens_(std::move(tokens)) {
  MX_CHECK(!tokens_.empty() && tokens_.size() <= kMaxVocabulary, tokens_.size(), " tokens");
  ids_.reserve(tokens_.size());
  for (size_t i = 0; i < tokens_.size(); ++i) {
    const auto id = static_cast<int32_t>(i);
    MX_CHECK(ids_.emplace(tokens_[i], id).second, "repeated token '", tokens_[i], "'");
    const std::string& t = tokens_[i];
    if (t.size() == 1 && static_cast<unsigned char>(t[0]) < 0x80)
      ascii_[static_cast<unsigned char>(t[0])] = id;
  }
}

std::optional<int32_t> Vocabulary::find(std::string_view token) const {
  const auto found = ids_.find(token);
  if (found == ids_.end()) return std::nullopt;
  return found->second;
}

std::string escape_token(std::string_view token) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(token.size());
  for (const char c : token) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      case ' ': out += "\\s"; break;
      default:
        if (is_control(static_cast<unsigned char>(c))) {
          out += "\\x";
          const auto byte = static_cast<unsigned char>(c);
          out += kDigits[byte >> 4];
          out += kDigits[byte & 15];
        } else {
          out += c;
        }
    }
  }
  return out;
}

Vocabulary parse_vocabulary(std::string_view text, const std::string& name, size_t max_tokens,
                            const std::string& limit) {
  max_tokens = std::min(max_tokens, kMaxVocabulary);
  utf8::check(text, name);
  std::vector<std::string> tokens;
  std::unordered_map<std::string, uint64_t> lines;
  recordio::text::for_each_line(text, [&](uint64_t number, std::string_view line) {
    if (line.empty())
      throw InputError(str(name, ":", number,
                           ": an empty line; every line is a token (a space is written \\s)"));
    if (tokens.size() == max_tokens)
      throw InputError(str(name, ":", number, ": the vocabulary holds more than ", max_tokens,
                           " tokens", limit.empty() ? "" : " (" + limit + ")"));
    std::string token = unescape_line(line, name, number);
    const auto [at, added] = lines.emplace(token, number);
    if (!added)
      throw InputError(
          str(name, ":", number, ": token '", escape_token(token), "' repeats line ", at->second));
    tokens.push_back(std::move(token));
  });
  if (tokens.empty())
    throw InputError(name + ": the vocabulary is empty (line 1 must be the unknown token)");
  return Vocabulary(std::move(tokens));
}

Vocabulary read_vocabulary(const std::string& path, size_t max_tokens, const std::string& limit) {
  return parse_vocabulary(utf8::read_file(path), path, max_tokens, limit);
}

void write_vocabulary(std::ostream& out, const Vocabulary& vocabulary) {
  for (const auto& token : vocabulary.tokens()) out << escape_token(token) << '\n';
}

std::vector<TokenCounter::Counted> TokenCounter::counted() const {
  std::vector<Counted> all;
  all.reserve(counts_.size() + ascii_.size());
  for (const auto& [token, e] : counts_) all.push_back({token, e.count, e.first});
  static const auto kAscii = [] {
    std::array<char, 128> chars{};
    for (size_t c = 0; c < chars.size(); ++c) chars[c] = static_cast<char>(c);
    return chars;
  }();
  for (size_t c = 0; c < ascii_.size(); ++c)
    if (ascii_[c].count > 0) all.push_back({{&kAscii[c], 1}, ascii_[c].count, ascii_[c].first});
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return all;
}

Vocabulary build_vocabulary(const TokenCounter& counter, const std::vector<std::string>& special,
                            size_t max_size) {
  MX_CHECK(!special.empty() && (max_size == 0 || max_size > special.size()));
  std::vector<TokenCounter::Counted> counted = counter.counted();
  std::erase_if(counted, [&](const auto& c) {
    return std::find(special.begin(), special.end(), c.token) != special.end();
  });
  // Stable: equal counts stay in order of first appearance.
  std::stable_sort(counted.begin(), counted.end(),
                   [](const auto& a, const auto& b) { return a.count > b.count; });
  size_t keep = counted.size();
  if (max_size > 0) keep = std::min(keep, max_size - special.size());
  if (special.size() + keep > kMaxVocabulary)
    throw InputError(str("the text holds ", special.size() + keep,
                         " distinct tokens, more than the ", kMaxVocabulary,
                         " a vocabulary may hold; cap it with --max-vocab"));
  std::vector<std::string> tokens = special;
  for (size_t i = 0; i < keep; ++i) tokens.emplace_back(counted[i].token);
  return Vocabulary(std::move(tokens));
}

}  // namespace mx

// Small string helpers shared by parsers and error messages.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mx {

std::string trim(std::string_view text);
std::vector<std::string> split(std::string_view text, char separator);
std::string join(const std::vector<std::string>& parts, std::string_view separator);
std::string to_lower(std::string_view text);

// Levenshtein distance, for "did you mean" suggestions.
size_t edit_distance(std::string_view a, std::string_view b);
// The candidate closest to `name`, or "" when none is close enough to be a
// plausible typo (distance above a third of the longer length, at least 2).
std::string closest_match(std::string_view name, const std::vector<std::string>& candidates);
// " (did you mean 'x'?)" or "" — to append to an "unknown ..." message.
std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates);

// Human-readable byte count: "512 B", "1.5 KiB", "3.20 MiB", "1.00 GiB".
std::string format_bytes(double bytes);

}  // namespace mx

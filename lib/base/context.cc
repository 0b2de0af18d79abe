#include "base/context.h"

#include <cctype>

#include "base/error.h"

namespace mx {

std::string Context::to_string() const {
  const char* name = type == DeviceType::kGPU         ? "gpu"
                     : type == DeviceType::kCPUPinned ? "cpu_pinned"
                                                      : "cpu";
  return std::string(name) + ":" + std::to_string(id);
}

Context Context::parse(const std::string& text) {
  auto fail = [&] {
    return InputError("cannot parse device '" + text + "' (expected cpu, cpu:N, gpu or gpu:N)");
  };
  size_t split = 0;
  while (split < text.size() &&
         (std::isalpha(static_cast<unsigned char>(text[split])) != 0 || text[split] == '_'))
    ++split;
  std::string name = text.substr(0, split);
  Context ctx;
  if (name == "cpu")
    ctx.type = DeviceType::kCPU;
  else if (name == "gpu")
    ctx.type = DeviceType::kGPU;
  else if (name == "cpu_pinned")
    ctx.type = DeviceType::kCPUPinned;
  else
    throw fail();
  std::string rest = text.substr(split);
  if (rest.empty()) return ctx;
  std::string digits;
  if (rest.front() == ':')
    digits = rest.substr(1);
  else if (rest.front() == '(' && rest.back() == ')')
    digits = rest.substr(1, rest.size() - 2);
  else
    throw fail();
  if (digits.empty() || digits.size() > 6) throw fail();
  for (char c : digits)
    if (std::isdigit(static_cast<unsigned char>(c)) == 0) throw fail();
  ctx.id = std::stoi(digits);
  return ctx;
}

}  // namespace mx

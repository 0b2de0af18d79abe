// The object behind an NDListHandle: the arrays of a .params / .nd file
// (e.g. a mean image) converted to float, as MXNDListCreate gives them.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace mx::capi {

struct NDList {
  struct Item {
    std::string key;  // "" when the file has no names
    std::vector<uint32_t> shape;
    std::vector<float> values;
  };
  std::vector<Item> items;

  // Throws InputError naming the byte offset of a malformed file.
  static NDList read(std::span<const char> bytes);
  // Throws InputError when `index` is out of range.
  const Item& at(size_t index) const;
};

}  // namespace mx::capi

#include "capi/nd_list.h"

#include "base/error.h"
#include "ndarray/params_io.h"

namespace mx::capi {

NDList NDList::read(std::span<const char> bytes) {
  NamedArrays list = read_params(bytes, "nd bytes");
  NDList out;
  for (size_t i = 0; i < list.arrays.size(); ++i) {
    const NDArray& array = list.arrays[i];
    Item item;
    if (!list.names.empty()) item.key = list.names[i];
    if (!array.is_none()) {  // MXNet's "none" entries stay empty
      item.shape.assign(array.shape().begin(), array.shape().end());
      dispatch_dtype(array.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        for (const T& v : array.to_vector<T>()) item.values.push_back(static_cast<float>(v));
      });
    }
    out.items.push_back(std::move(item));
  }
  return out;
}

const NDList::Item& NDList::at(size_t index) const {
  if (index >= items.size())
    throw InputError(
        str("index ", index, " is out of range: the list has ", items.size(), " array(s)"));
  return items[index];
}

}  // namespace mx::capi

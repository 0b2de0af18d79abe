// Iterators by MXNet's names, from attribute strings or a YAML mapping:
// what a config's `data:` section turns into.
//   data: {type: ImageRecordIter, path_imgrec: train.rec, data_shape: [3, 224, 224], batch_size:
//   64}
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/param.h"
#include "base/param_yaml.h"
#include "io/data_iter.h"

namespace mx {

// "ImageRecordIter", "MNISTIter", "CSVIter", "SyntheticIter", "TextIter".
std::vector<std::string> data_iter_types();

// What an iterator type is and its parameters (for listings and the C API's
// MXDataIterGetIterInfo); InputError for an unknown type.
struct DataIterDescription {
  std::string description;
  std::vector<ParamFieldInfo> params;
};
DataIterDescription describe_data_iter(const std::string& type);

// Unknown types and bad parameters throw InputError naming `owner`.
std::unique_ptr<DataIter> create_data_iter(const std::string& type,
                                           const std::map<std::string, std::string>& params,
                                           const std::string& owner);

// Checks `params` as create_data_iter would, without making the iterator
// (no file is read).
void check_data_iter_params(const std::string& type,
                            const std::map<std::string, std::string>& params,
                            const std::string& owner);

// From a YAML mapping whose `type` key names the iterator; errors carry the
// file, line and column.
std::unique_ptr<DataIter> create_data_iter(const YAML::Node& mapping, const std::string& file);

}  // namespace mx

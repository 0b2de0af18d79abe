// Data iterators from a config section (data.train, data.val): `type`
// selects the iterator (mnist, record, csv, synthetic, text; MXNet's class
// names MNISTIter, ImageRecordIter, CSVIter and TextIter work too), the
// other keys are its parameters with MXNet's names. batch_size, seed,
// num_parts and part_index come from the trainer unless the section sets
// them (shuffle too, for the iterators that have it). Generated data
// (synthetic) has no shards: worker k uses seed + k.
#pragma once

#include <memory>
#include <string>

#include "io/data_iter.h"
#include "train/config.h"

namespace mx::train {

struct DataDefaults {
  int batch_size = 0;
  int seed = 0;
  int num_parts = 1, part_index = 0;
  bool shuffle = true;  // for training data
};

std::unique_ptr<DataIter> make_data_iter(const Config& config, const std::string& section,
                                         const DataDefaults& defaults);

// Checks a section's type and parameters without making the iterator (no
// file is read): errors name the key's place.
void check_data_section(const Config& config, const std::string& section,
                        const DataDefaults& defaults);

// The iterator types, for messages and docs.
std::vector<std::string> data_type_names();

}  // namespace mx::train

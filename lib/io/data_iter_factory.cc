#include "io/data_iter_factory.h"

#include "base/strings.h"
#include "io/csv_iter.h"
#include "io/image_record_iter.h"
#include "io/mnist_iter.h"
#include "io/synthetic_iter.h"
#include "io/text_iter.h"

namespace mx {

std::vector<std::string> data_iter_types() {
  return {"ImageRecordIter", "MNISTIter", "CSVIter", "SyntheticIter", "TextIter"};
}

namespace {

[[noreturn]] void unknown_type(const std::string& owner, const std::string& type) {
  throw InputError(owner + ": unknown data iterator '" + type + "'" +
                   did_you_mean(type, data_iter_types()) +
                   "; iterators are: " + join(data_iter_types(), ", "));
}

}  // namespace

DataIterDescription describe_data_iter(const std::string& type) {
  if (type == "ImageRecordIter")
    return {"Batches of images decoded and augmented from a RecordIO file (.rec with its .idx).",
            ImageRecordIterParam::field_infos()};
  if (type == "MNISTIter")
    return {
        "Batches of images and labels from a pair of IDX files (plain or gzip), scaled by "
        "1/256.",
        MNISTIterParam::field_infos()};
  if (type == "CSVIter")
    return {"Batches of examples and labels from CSV files, one example per line.",
            CSVIterParam::field_infos()};
  if (type == "SyntheticIter")
    return {"Fixed random batches of a given shape, for benchmarks.",
            SyntheticIterParam::field_infos()};
  if (type == "TextIter")
    return {"Language-model batches from a token file of mx-pack text: (batch, seq_len) windows "
            "of batch_size contiguous streams, labels the next tokens.",
            TextIterParam::field_infos()};
  unknown_type("data iterator", type);
}

std::unique_ptr<DataIter> create_data_iter(const std::string& type,
                                           const std::map<std::string, std::string>& params,
                                           const std::string& owner) {
  const std::string who = owner + " " + type;
  if (type == "ImageRecordIter")
    return std::make_unique<ImageRecordIter>(ImageRecordIterParam::from_strings(params, who));
  if (type == "MNISTIter")
    return std::make_unique<MNISTIter>(MNISTIterParam::from_strings(params, who));
  if (type == "CSVIter") return std::make_unique<CSVIter>(CSVIterParam::from_strings(params, who));
  if (type == "SyntheticIter")
    return std::make_unique<SyntheticIter>(SyntheticIterParam::from_strings(params, who));
  if (type == "TextIter")
    return std::make_unique<TextIter>(TextIterParam::from_strings(params, who));
  unknown_type(owner, type);
}

void check_data_iter_params(const std::string& type,
                            const std::map<std::string, std::string>& params,
                            const std::string& owner) {
  const std::string who = owner + " " + type;
  if (type == "ImageRecordIter")
    ImageRecordIterParam::from_strings(params, who);
  else if (type == "MNISTIter")
    MNISTIterParam::from_strings(params, who);
  else if (type == "CSVIter")
    CSVIterParam::from_strings(params, who);
  else if (type == "SyntheticIter")
    SyntheticIterParam::from_strings(params, who);
  else if (type == "TextIter")
    TextIterParam::from_strings(params, who);
  else
    unknown_type(owner, type);
}

std::unique_ptr<DataIter> create_data_iter(const YAML::Node& mapping, const std::string& file) {
  const std::string where = yaml_location(mapping, file);
  if (!mapping.IsMap() || !mapping["type"])
    throw InputError(where + ": a data iterator needs 'type' (one of " +
                     join(data_iter_types(), ", ") + ")");
  const std::string type = yaml_to_attr_string(mapping["type"], file);
  const auto params = yaml_to_attr_strings(mapping, file, {"type"});
  try {
    return create_data_iter(type, params, "data");
  } catch (const InputError& e) {
    const std::string message = e.what();
    // Parameter errors already say which iterator; add where it is written.
    if (message.rfind(file, 0) == 0) throw;
    throw InputError(where + ": " + message);
  }
}

}  // namespace mx

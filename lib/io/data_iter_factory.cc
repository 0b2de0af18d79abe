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
  throw InputError(owner + ": unknown data iterator '" + type + "'" +
                   did_you_mean(type, data_iter_types()) +
                   "; iterators are: " + join(data_iter_types(), ", "));
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
    throw InputError(owner + ": unknown data iterator '" + type + "'" +
                     did_you_mean(type, data_iter_types()) +
                     "; iterators are: " + join(data_iter_types(), ", "));
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

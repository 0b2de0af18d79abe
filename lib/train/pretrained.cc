#include "train/pretrained.h"

#include <cctype>
#include <filesystem>
#include <vector>

#include "base/error.h"

#if MX_HAVE_ONNX
#include "onnx/model_file.h"
#include "onnx/tensor_proto.h"
#endif

namespace mx::train {
namespace {

bool is_onnx_path(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& ch : ext) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return ext == ".onnx";
}

optim::PretrainedReport load_onnx_initializers(const std::string& path,
                                               const std::map<std::string, NDArray>& targets) {
#if MX_HAVE_ONNX
  if (!std::filesystem::exists(path)) throw InputError(path + " does not exist");
  const ::onnx::ModelProto model = onnx::read_model(path);
  std::vector<std::string> names;
  std::vector<NDArray> arrays;
  for (const auto& init : model.graph().initializer()) {
    names.push_back(init.name());
    arrays.push_back(onnx::tensor_to_array(init, path + ": initializer '" + init.name() + "'"));
  }
  return optim::apply_pretrained(names, arrays, path, targets);
#else
  (void)targets;
  throw InputError(path +
                   ": this build of mx has no ONNX support (install libonnx-dev and "
                   "libprotobuf-dev, then rebuild), so train.pretrained cannot read ONNX models");
#endif
}

}  // namespace

optim::PretrainedReport load_pretrained_weights(const std::string& path,
                                                const std::map<std::string, NDArray>& targets) {
  if (is_onnx_path(path)) return load_onnx_initializers(path, targets);
  return optim::load_pretrained(path, targets);
}

}  // namespace mx::train

// Runs ONNX's backend node tests (Debian's libonnx-testdata) for every
// operator mx imports: each case's model is imported, run on its stored
// inputs and compared with its stored outputs (rtol 1e-3, atol 1e-7, as
// ONNX's own runner). A case mx declines (UnsupportedModel: an element type
// or attribute value it does not run) is skipped with the reason; any other
// error or a wrong value is a failure, and the exit code is 1.
//   onnx_conformance NODE_DIR [--markdown]
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include "base/strings.h"
#include "onnx/import.h"
#include "onnx/model_file.h"
#include "onnx/tensor_proto.h"
#include "run_model.h"

namespace fs = std::filesystem;
using namespace mx;
namespace mxo = mx::onnx;

namespace {

struct Tally {
  int passed = 0, failed = 0, skipped = 0;
  std::set<int> opsets;
  std::vector<std::string> notes;
};

std::string compare(const NDArray& got, const NDArray& want, const std::string& name) {
  const bool scalar_like = got.size() == 1 && want.size() == 1;
  if (got.shape() != want.shape() && !scalar_like)
    return str(name, ": shape ", got.shape().to_string(), ", expected ", want.shape().to_string());
  if (got.dtype() != want.dtype())
    return str(name, ": type ", dtype_name(got.dtype()), ", expected ", dtype_name(want.dtype()));
  if (want.dtype() == DType::kUint8 || want.dtype() == DType::kInt8) {
    // Quantized outputs: the same integers.
    auto ints = [](const NDArray& a) {
      std::vector<int> v;
      if (a.dtype() == DType::kUint8)
        for (uint8_t x : a.to_vector<uint8_t>()) v.push_back(x);
      else
        for (int8_t x : a.to_vector<int8_t>()) v.push_back(x);
      return v;
    };
    const std::vector<int> g = ints(got), w = ints(want);
    for (size_t i = 0; i < g.size(); ++i)
      if (g[i] != w[i]) return str(name, "[", i, "] = ", g[i], ", expected ", w[i]);
    return "";
  }
  if (want.dtype() != DType::kFloat32)
    return name + ": only float32 and 8-bit outputs are compared";
  auto g = got.to_vector<float>(), w = want.to_vector<float>();
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(w[i]) && std::isnan(g[i])) continue;
    if (std::isinf(w[i]) && g[i] == w[i]) continue;
    if (!(std::fabs(g[i] - w[i]) <= 1e-7 + 1e-3 * std::fabs(w[i])))
      return str(name, "[", i, "] = ", g[i], ", expected ", w[i]);
  }
  return "";
}

// "" when the case passes; throws UnsupportedModel when mx declines it.
std::string run_case(const fs::path& dir, const ::onnx::ModelProto& proto) {
  std::string failure;
  for (const auto& set : fs::directory_iterator(dir)) {
    if (!set.is_directory()) continue;
    std::map<std::string, NDArray> values;
    for (int k = 0; k < proto.graph().input_size(); ++k) {
      fs::path p = set.path() / str("input_", k, ".pb");
      if (!fs::exists(p)) break;
      // Inputs are listed without initializers in these models. Values of
      // types mx lacks are left out: the import then names the input.
      try {
        values[proto.graph().input(k).name()] =
            mxo::tensor_to_array(mxo::read_tensor_file(p.string()), p.string());
      } catch (const InputError&) {
      }
    }
    mxo::ImportOptions options;
    options.input_values = values;
    mxo::ImportedModel model = mxo::import_model(proto, (dir / "model.onnx").string(), options);
    auto outputs = mxo::testing::run_imported(model, values);
    for (size_t k = 0; k < outputs.size(); ++k) {
      fs::path p = set.path() / str("output_", k, ".pb");
      NDArray want = mxo::tensor_to_array(mxo::read_tensor_file(p.string()), p.string());
      std::string diff = compare(outputs[k], want,
                                 set.path().filename().string() + " output " + std::to_string(k));
      if (!diff.empty()) return diff;
    }
  }
  return failure;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: onnx_conformance NODE_DIR [--markdown]\n";
    return 2;
  }
  const bool markdown = argc > 2 && std::string(argv[2]) == "--markdown";
  const auto claimed = mxo::importable_operators();
  std::map<std::string, Tally> table;
  std::vector<fs::path> cases;
  for (const auto& entry : fs::directory_iterator(argv[1]))
    if (entry.is_directory() && fs::exists(entry.path() / "model.onnx"))
      cases.push_back(entry.path());
  std::sort(cases.begin(), cases.end());
  for (const auto& dir : cases) {
    const std::string name = dir.filename().string();
    // Function expansions test other operators' definitions.
    if (name.size() > 9 && name.compare(name.size() - 9, 9, "_expanded") == 0) continue;
    // The operator under test first (the last node: the only one in most cases).
    ::onnx::ModelProto proto;
    {
      std::ifstream in(dir / "model.onnx", std::ios::binary);
      if (!proto.ParseFromIstream(&in) || proto.graph().node_size() == 0) continue;
    }
    const std::string op = proto.graph().node(proto.graph().node_size() - 1).op_type();
    if (std::find(claimed.begin(), claimed.end(), op) == claimed.end()) continue;
    Tally& t = table[op];
    int opset = 0;
    for (const auto& o : proto.opset_import())
      if (o.domain().empty()) opset = static_cast<int>(o.version());
    t.opsets.insert(opset);
    try {
      proto = mxo::read_model((dir / "model.onnx").string());  // with onnx::checker
      std::string diff = run_case(dir, proto);
      if (diff.empty()) {
        ++t.passed;
      } else {
        ++t.failed;
        t.notes.push_back("FAIL " + name + ": " + diff);
      }
    } catch (const mxo::UnsupportedModel& e) {
      ++t.skipped;
      // The reason, without the file and node the case's name already gives.
      std::string why = e.what();
      const std::string file = (dir / "model.onnx").string() + ": ";
      if (why.rfind(file, 0) == 0) why = why.substr(file.size());
      if (auto p = why.rfind("): "); p != std::string::npos && why.rfind("node '", 0) == 0)
        why = why.substr(p + 3);
      t.notes.push_back("skip " + name + ": " + why);
    } catch (const std::exception& e) {
      ++t.failed;
      t.notes.push_back("FAIL " + name + ": " + e.what());
    }
  }
  int passed = 0, failed = 0, skipped = 0;
  if (markdown)
    std::cout
        << "| operator | opsets | passed | failed | skipped |\n| --- | --- | --- | --- | --- |\n";
  for (const auto& op : claimed) {
    const Tally& t = table[op];
    std::vector<std::string> opsets;
    for (int o : t.opsets) opsets.push_back(std::to_string(o));
    passed += t.passed, failed += t.failed, skipped += t.skipped;
    if (markdown) {
      std::cout << "| " << op << " | " << join(opsets, ", ") << " | " << t.passed << " | "
                << t.failed << " | " << t.skipped << " |\n";
    } else {
      std::cout << op << ": " << t.passed << " passed, " << t.failed << " failed, " << t.skipped
                << " skipped (opsets " << join(opsets, ", ") << ")\n";
    }
    for (const auto& note : t.notes)
      std::cout << (markdown ? "<!-- " : "  ") << note << (markdown ? " -->\n" : "\n");
  }
  std::cout << (markdown ? "\n" : "") << "total: " << passed << " passed, " << failed << " failed, "
            << skipped << " skipped\n";
  return failed > 0 ? 1 : 0;
}

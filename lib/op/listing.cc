#include "op/listing.h"

#include <sstream>

#include "base/strings.h"
#include "op/dnnl/dnnl_switch.h"
#include "op/registry.h"

namespace mx::op {

namespace {

// A plausible value of a parameter of type `type`, to evaluate declarations.
std::string example_value(const std::string& type) {
  if (type == "Shape(tuple)") return "(1, 1)";
  if (type == "boolean") return "False";
  if (type == "dtype") return "float32";
  if (type.size() > 2 && type.front() == '{') return type.substr(2, type.find('\'', 2) - 2);
  return "1";
}

}  // namespace

OpSignature op_signature(const OpDef& def) {
  AttrMap attrs;
  for (const auto& p : def.param_infos)
    if (p.required) attrs[p.name] = example_value(p.type);
  // Some optional shapes are needed together (Pooling's kernel unless
  // global_pool): with only the required ones failing, give them too.
  ParamsPtr params;
  try {
    params = def.parse(attrs, def.name);
  } catch (const Error&) {
    for (const auto& p : def.param_infos)
      if (p.type == "Shape(tuple)") attrs[p.name] = example_value(p.type);
  }
  OpSignature s;
  try {
    if (!params) params = def.parse(attrs, def.name);
    s.inputs = def.input_names(params);
    s.aux = def.aux_names(params);
    auto outputs = def.output_names(params);
    outputs.resize(static_cast<size_t>(def.num_visible_outputs(params)));
    s.outputs = outputs;
  } catch (const Error&) {
    s.inputs = {"(depends on parameters)"};
  }
  return s;
}

namespace {

// The operators whose CPU kernels call oneDNN's where it takes the case
// (lib/op/dnnl), falling back to the reference kernels otherwise.
bool has_dnnl_kernel(const OpDef& def) {
  static const char* const kDnnl[] = {"Convolution", "Deconvolution", "FullyConnected",
                                      "LRN",         "Pooling",       "RNN"};
  if (!dnnl_built()) return false;
  for (const char* name : kDnnl)
    if (def.name == name) return true;
  return false;
}

// Which devices have kernels, and which CPU implementations exist.
struct Kernels {
  std::vector<std::string> devices;              // "cpu", "gpu"
  std::vector<std::string> cpu_implementations;  // "reference", "oneDNN"
  bool gpu_backward_missing = false;             // a GPU forward without the backward the CPU has
};

Kernels kernels_of(const OpDef& def) {
  Kernels k;
  if (def.has_kernel(DeviceKind::kCPU)) {
    k.devices.push_back("cpu");
    k.cpu_implementations.push_back("reference");
    if (has_dnnl_kernel(def)) k.cpu_implementations.push_back("oneDNN");
  }
  if (def.has_kernel(DeviceKind::kGPU)) {
    k.devices.push_back("gpu");
    k.gpu_backward_missing = def.backward[static_cast<int>(DeviceKind::kCPU)] &&
                             !def.backward[static_cast<int>(DeviceKind::kGPU)];
  }
  return k;
}

// "cpu (reference, oneDNN), gpu" for the text and Markdown listings.
std::string kernels_text(const OpDef& def) {
  const Kernels k = kernels_of(def);
  std::vector<std::string> parts;
  for (const auto& d : k.devices) {
    if (d == "cpu")
      parts.push_back("cpu (" + join(k.cpu_implementations, ", ") + ")");
    else
      parts.push_back(k.gpu_backward_missing ? d + " (forward only)" : d);
  }
  return parts.empty() ? "none" : join(parts, ", ");
}

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string json_list(const std::vector<std::string>& items) {
  std::vector<std::string> quoted;
  for (const auto& i : items) quoted.push_back(json_string(i));
  return "[" + join(quoted, ", ") + "]";
}

void print_text(std::ostream& out, const OpDef& def) {
  OpSignature s = op_signature(def);
  out << def.name;
  if (!def.aliases.empty()) out << " (also " << join(def.aliases, ", ") << ")";
  out << ": " << def.description << "\n";
  out << "  inputs: " << join(s.inputs, ", ");
  if (!s.aux.empty()) out << "; auxiliary states: " << join(s.aux, ", ");
  out << "; outputs: " << join(s.outputs, ", ") << "\n";
  out << "  kernels: " << kernels_text(def) << "\n";
  out << "  mixed precision: " << def.amp_text << "\n";
  for (const auto& p : def.param_infos) {
    out << "  " << p.name << " : " << p.type
        << (p.required ? ", required"
                       : ", default " + (p.default_text.empty() ? "''" : p.default_text));
    if (!p.description.empty()) out << " — " << p.description;
    out << "\n";
  }
}

void print_markdown(std::ostream& out, const OpDef& def) {
  OpSignature s = op_signature(def);
  out << "## " << def.name << "\n\n" << def.description << "\n\n";
  if (!def.aliases.empty()) out << "Also called: " << join(def.aliases, ", ") << ".\n\n";
  out << "Inputs: " << join(s.inputs, ", ") << ".";
  if (!s.aux.empty()) out << " Auxiliary states: " << join(s.aux, ", ") << ".";
  out << " Outputs: " << join(s.outputs, ", ") << ".";
  if (def.is_loss) out << " Loss layer: its gradient does not use the output gradient.";
  out << "\n\nKernels: " << kernels_text(def) << ".\n\n";
  out << "Mixed precision (AMP class, docs/config.md `train.precision`): " << def.amp_text
      << ".\n\n";
  if (def.param_infos.empty()) return;
  out << "| parameter | type | default | description |\n| --- | --- | --- | --- |\n";
  for (const auto& p : def.param_infos)
    out << "| `" << p.name << "` | " << p.type << " | "
        << (p.required ? "required" : "`" + p.default_text + "`") << " | " << p.description
        << " |\n";
  out << "\n";
}

void print_json(std::ostream& out, const OpDef& def) {
  OpSignature s = op_signature(def);
  out << "{\"name\": " << json_string(def.name) << ", \"aliases\": " << json_list(def.aliases)
      << ", \"description\": " << json_string(def.description)
      << ", \"inputs\": " << json_list(s.inputs) << ", \"aux\": " << json_list(s.aux)
      << ", \"outputs\": " << json_list(s.outputs)
      << ", \"loss\": " << (def.is_loss ? "true" : "false")
      << ", \"devices\": " << json_list(kernels_of(def).devices)
      << ", \"cpu_implementations\": " << json_list(kernels_of(def).cpu_implementations)
      << ", \"amp\": " << json_string(def.amp_text) << ", \"gpu_backward\": "
      << (def.backward[static_cast<int>(DeviceKind::kGPU)] ? "true" : "false") << ", \"params\": [";
  for (size_t i = 0; i < def.param_infos.size(); ++i) {
    const auto& p = def.param_infos[i];
    out << (i ? ", " : "") << "{\"name\": " << json_string(p.name)
        << ", \"type\": " << json_string(p.type)
        << ", \"required\": " << (p.required ? "true" : "false")
        << ", \"default\": " << json_string(p.default_text)
        << ", \"description\": " << json_string(p.description) << "}";
  }
  out << "]}";
}

size_t count_gpu(const std::vector<const OpDef*>& defs) {
  size_t n = 0;
  for (const OpDef* def : defs) n += def->has_kernel(DeviceKind::kGPU) ? 1 : 0;
  return n;
}

}  // namespace

void print_operators(std::ostream& out, ListingFormat format, const std::string& name) {
  const auto& registry = OpRegistry::get();
  std::vector<const OpDef*> defs;
  if (name.empty())
    defs = registry.list();
  else
    defs = {&registry.find(name)};
  if (format == ListingFormat::kMarkdown && name.empty()) {
    out << "# Operators\n\n"
        << "Generated from the operator registry by `scripts/gen_operator_docs.sh`; do not edit.\n"
        << "Names and parameters are Apache MXNet 1.x's. " << defs.size() << " operators.\n"
        << "On the CPU, Convolution, Deconvolution, FullyConnected, Pooling, LRN and RNN\n"
        << "run oneDNN's kernels in float32 when mx is built with it (MX_USE_DNNL), and the\n"
        << "OpenBLAS/im2col reference kernels otherwise, with MX_DNNL=0, or for the cases\n"
        << "oneDNN does not take (docs/architecture.md, op).\n\n"
        << "Kernels per device, as a build with CUDA and oneDNN has them (`mx-ops` says\n"
        << "what the build at hand has); a network that uses an operator without a kernel\n"
        << "on the chosen device fails when it is bound, naming the node. " << count_gpu(defs)
        << " of " << defs.size() << " operators have GPU kernels.\n\n"
        << "| operator | CPU | GPU |\n| --- | --- | --- |\n";
    for (const OpDef* def : defs) {
      const Kernels k = kernels_of(*def);
      const bool gpu = def->has_kernel(DeviceKind::kGPU);
      out << "| " << def->name << " | " << join(k.cpu_implementations, ", ") << " | "
          << (!gpu                     ? "—"
              : k.gpu_backward_missing ? "forward only"
                                       : "yes")
          << " |\n";
    }
    out << "\n";
  }
  if (format == ListingFormat::kJson) out << "[";
  for (size_t i = 0; i < defs.size(); ++i) {
    switch (format) {
      case ListingFormat::kText: print_text(out, *defs[i]); break;
      case ListingFormat::kMarkdown: print_markdown(out, *defs[i]); break;
      case ListingFormat::kJson:
        if (i) out << ",\n ";
        print_json(out, *defs[i]);
        break;
    }
  }
  if (format == ListingFormat::kJson) out << "]\n";
}

}  // namespace mx::op

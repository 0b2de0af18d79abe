// The C API's Symbol functions (include/mx/c_api.h) over graph::Symbol, and
// mx's MXSymbolCreateFromYAML over the network language of lib/train.
#include <yaml-cpp/yaml.h>

#include <memory>

#include "capi/c_api_error.h"
#include "capi/c_api_util.h"
#include "capi/op_handles.h"
#include "mx/c_api.h"
#include "op/registry.h"
#include "train/network_yaml.h"

using mx::InputError;
using mx::str;
using mx::graph::Symbol;
using namespace mx::capi;

namespace {

ApiSymbol& symbol_handle(SymbolHandle h, const char* what = "symbol") {
  return handle_cast<ApiSymbol>(h, what);
}
const Symbol& symbol_of(SymbolHandle h, const char* what = "symbol") {
  return symbol_handle(h, what).composed(what);
}

void new_symbol(Symbol s, SymbolHandle* out) {
  require(out != nullptr, "out is NULL");
  *out = to_handle(std::make_unique<ApiSymbol>(std::move(s)));
}

// A copy whose nodes are new, so that attributes set on one do not change
// the other.
Symbol deep_copy(const Symbol& s) {
  std::map<const mx::graph::Node*, std::shared_ptr<mx::graph::Node>> copies;
  for (const auto& node : mx::graph::topo_order(s.outputs())) {
    auto c = std::make_shared<mx::graph::Node>(*node);
    for (auto& in : c->inputs) in.node = copies.at(in.node.get());
    copies[node.get()] = c;
  }
  std::vector<mx::graph::NodeEntry> outputs = s.outputs();
  for (auto& e : outputs) e.node = copies.at(e.node.get());
  return Symbol(outputs);
}

void list_names(std::vector<std::string> names, mx_uint* out_size, const char*** out,
                ReturnStrings& buffer) {
  require(out_size != nullptr && out != nullptr, "out_size or out_str_array is NULL");
  *out_size = static_cast<mx_uint>(names.size());
  *out = buffer.set(std::move(names));
}

}  // namespace

int MXSymbolCreateVariable(const char* name, SymbolHandle* out) {
  return guarded("MXSymbolCreateVariable", [&] {
    require(name != nullptr, "name is NULL");
    new_symbol(Symbol::variable(name), out);
  });
}

int MXSymbolCreateAtomicSymbol(AtomicSymbolCreator creator, mx_uint num_param, const char** keys,
                               const char** vals, SymbolHandle* out) {
  return guarded("MXSymbolCreateAtomicSymbol", [&] {
    const mx::op::OpDef& def = op_of(creator);
    require(out != nullptr, "out is NULL");
    ApiSymbol::Atomic atomic{def.name, string_pairs(num_param, keys, vals)};
    // Checked now, unless the input count is still to come (Concat's num_args).
    auto params = mx::graph::param_attrs(atomic.attrs);
    std::map<std::string, std::string> with_count = params;
    add_num_args(def, 1, with_count);
    if (with_count.size() == params.size()) (void)mx::op::OpInstance(def.name, params);
    *out = to_handle(std::make_unique<ApiSymbol>(std::move(atomic)));
  });
}

int MXSymbolCompose(SymbolHandle sym, const char* name, mx_uint num_args, const char** keys,
                    SymbolHandle* args) {
  return guarded("MXSymbolCompose", [&] {
    ApiSymbol& target = symbol_handle(sym, "sym");
    if (!target.atomic)
      throw InputError(
          "sym is not an operator from MXSymbolCreateAtomicSymbol (or was composed "
          "already); mx composes operators only");
    require(name != nullptr && name[0] != '\0', "name is NULL or empty");
    require(num_args == 0 || args != nullptr, "args is NULL");
    std::vector<Symbol> positional;
    std::map<std::string, Symbol> named;
    const auto names = keys ? strings(num_args, keys, "keys") : std::vector<std::string>{};
    for (mx_uint i = 0; i < num_args; ++i) {
      const std::string what = str("args[", i, "]");
      const Symbol& s = symbol_of(args[i], what.c_str());
      if (keys == nullptr) {
        positional.push_back(s);
      } else if (!named.emplace(names[i], s).second) {
        throw InputError(str("input '", names[i], "' is given twice"));
      }
    }
    auto attrs = target.atomic->attrs;
    add_num_args(mx::op::OpRegistry::get().find(target.atomic->op), num_args, attrs);
    Symbol composed = Symbol::create(target.atomic->op, name, attrs, positional, named);
    target.symbol = std::move(composed);
    target.atomic.reset();
  });
}

int MXSymbolCreateGroup(mx_uint num_symbols, SymbolHandle* symbols, SymbolHandle* out) {
  return guarded("MXSymbolCreateGroup", [&] {
    require(num_symbols == 0 || symbols != nullptr, "symbols is NULL");
    std::vector<Symbol> parts;
    for (mx_uint i = 0; i < num_symbols; ++i) {
      const std::string what = str("symbols[", i, "]");
      parts.push_back(symbol_of(symbols[i], what.c_str()));
    }
    new_symbol(Symbol::group(parts), out);
  });
}

int MXSymbolCreateFromJSON(const char* json, SymbolHandle* out) {
  return guarded("MXSymbolCreateFromJSON", [&] {
    require(json != nullptr, "json is NULL");
    new_symbol(Symbol::from_json(json), out);
  });
}

int MXSymbolCreateFromFile(const char* fname, SymbolHandle* out) {
  return guarded("MXSymbolCreateFromFile", [&] {
    require(fname != nullptr, "fname is NULL");
    new_symbol(Symbol::load(fname), out);
  });
}

int MXSymbolCreateFromYAML(const char* yaml, SymbolHandle* out) {
  return guarded("MXSymbolCreateFromYAML", [&] {
    require(yaml != nullptr, "yaml is NULL");
    YAML::Node network;
    try {
      network = YAML::Load(yaml);
    } catch (const YAML::Exception& e) {
      throw InputError(str("YAML text:", e.mark.line + 1, ":", e.mark.column + 1, ": ", e.msg));
    }
    new_symbol(mx::train::build_network(network, "YAML text"), out);
  });
}

int MXSymbolSaveToJSON(SymbolHandle symbol, const char** out_json) {
  return guarded("MXSymbolSaveToJSON", [&] {
    require(out_json != nullptr, "out_json is NULL");
    thread_local std::string json;
    json = symbol_of(symbol).to_json();
    *out_json = json.c_str();
  });
}

int MXSymbolSaveToFile(SymbolHandle symbol, const char* fname) {
  return guarded("MXSymbolSaveToFile", [&] {
    require(fname != nullptr, "fname is NULL");
    symbol_of(symbol).save(fname);
  });
}

int MXSymbolFree(SymbolHandle symbol) {
  return guarded("MXSymbolFree", [&] { take_handle<ApiSymbol>(symbol, "symbol"); });
}

int MXSymbolCopy(SymbolHandle symbol, SymbolHandle* out) {
  return guarded("MXSymbolCopy", [&] {
    require(out != nullptr, "out is NULL");
    const ApiSymbol& s = symbol_handle(symbol);
    auto copy = s.atomic ? std::make_unique<ApiSymbol>(*s.atomic)
                         : std::make_unique<ApiSymbol>(deep_copy(s.symbol));
    *out = to_handle(std::move(copy));
  });
}

int MXSymbolGetName(SymbolHandle symbol, const char** out, int* success) {
  return guarded("MXSymbolGetName", [&] {
    require(out != nullptr && success != nullptr, "out or success is NULL");
    const Symbol& s = symbol_of(symbol);
    thread_local std::string name;
    *success = s.num_outputs() == 1 ? 1 : 0;
    if (*success) name = s.name();
    *out = *success ? name.c_str() : nullptr;
  });
}

int MXSymbolGetAttr(SymbolHandle symbol, const char* key, const char** out, int* success) {
  return guarded("MXSymbolGetAttr", [&] {
    require(key != nullptr, "key is NULL");
    require(out != nullptr && success != nullptr, "out or success is NULL");
    const Symbol& s = symbol_of(symbol);
    thread_local std::string value;
    std::optional<std::string> found;
    if (s.num_outputs() == 1) found = s.attr(key);
    *success = found ? 1 : 0;
    if (found) value = *found;
    *out = found ? value.c_str() : nullptr;
  });
}

int MXSymbolSetAttr(SymbolHandle symbol, const char* key, const char* value) {
  return guarded("MXSymbolSetAttr", [&] {
    require(key != nullptr && value != nullptr, "key or value is NULL");
    ApiSymbol& s = symbol_handle(symbol);
    if (s.atomic) {  // a parameter or attribute before composition
      s.atomic->attrs[key] = value;
      return;
    }
    s.symbol.set_attr(key, value);
  });
}

int MXSymbolListArguments(SymbolHandle symbol, mx_uint* out_size, const char*** out_str_array) {
  return guarded("MXSymbolListArguments", [&] {
    thread_local ReturnStrings names;
    list_names(symbol_of(symbol).list_arguments(), out_size, out_str_array, names);
  });
}

int MXSymbolListOutputs(SymbolHandle symbol, mx_uint* out_size, const char*** out_str_array) {
  return guarded("MXSymbolListOutputs", [&] {
    thread_local ReturnStrings names;
    list_names(symbol_of(symbol).list_outputs(), out_size, out_str_array, names);
  });
}

int MXSymbolListAuxiliaryStates(SymbolHandle symbol, mx_uint* out_size,
                                const char*** out_str_array) {
  return guarded("MXSymbolListAuxiliaryStates", [&] {
    thread_local ReturnStrings names;
    list_names(symbol_of(symbol).list_auxiliary_states(), out_size, out_str_array, names);
  });
}

int MXSymbolGetNumOutputs(SymbolHandle symbol, mx_uint* output_count) {
  return guarded("MXSymbolGetNumOutputs", [&] {
    require(output_count != nullptr, "output_count is NULL");
    *output_count = static_cast<mx_uint>(symbol_of(symbol).num_outputs());
  });
}

int MXSymbolGetInternals(SymbolHandle symbol, SymbolHandle* out) {
  return guarded("MXSymbolGetInternals",
                 [&] { new_symbol(symbol_of(symbol).get_internals(), out); });
}

int MXSymbolGetOutput(SymbolHandle symbol, mx_uint index, SymbolHandle* out) {
  return guarded("MXSymbolGetOutput", [&] { new_symbol(symbol_of(symbol)[index], out); });
}

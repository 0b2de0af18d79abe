// Typed parameter structs: each field is declared once with its MXNet name,
// default, allowed range or values and a one-line description. The same
// declaration parses values from attribute strings (MXNet's JSON, YAML
// scalars), prints them back, validates them and lists them for --help and
// the generated docs.
//
//   struct PoolingParam : Params<PoolingParam> {
//     Shape kernel; PoolType pool_type; bool global_pool;
//     static void declare(ParamDecl<PoolingParam>& d) {
//       d.field("kernel", &PoolingParam::kernel).set_default(Shape()).describe("...");
//       d.field("pool_type", &PoolingParam::pool_type).set_default(PoolType::kMax)
//           .add_enum("max", PoolType::kMax).add_enum("avg", PoolType::kAvg);
//       d.field("global_pool", &PoolingParam::global_pool).set_default(false);
//     }
//   };
//   auto p = PoolingParam::from_strings({{"kernel", "(2, 2)"}}, "Pooling 'pool1'");
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/param_value.h"
#include "base/param_yaml.h"
#include "base/strings.h"

namespace mx {

// What a listing shows of one field.
struct ParamFieldInfo {
  std::string name;
  std::string type;          // "int", "float", "Shape(tuple)", "{'max', 'avg'}", ...
  std::string default_text;  // "" when required
  bool required = false;
  std::string description;
};

template <typename P>
struct ParamField {
  ParamFieldInfo info;
  // Parses text into the field; throws InputError with a reason on failure.
  std::function<void(P&, const std::string&)> parse;
  std::function<std::string(const P&)> print;
  std::function<void(P&)> set_default;
};

// How one field's text is checked and converted: bounds for numbers, the
// accepted names for enums. Copied into the field's closures.
template <typename T>
struct FieldRules {
  static constexpr bool kIsEnum = std::is_enum_v<T> && !std::is_same_v<T, DType>;

  std::optional<T> lower, upper;
  std::vector<std::pair<std::string, T>> enum_values;

  std::string type_name() const {
    if constexpr (kIsEnum) {
      std::vector<std::string> names;
      for (auto& e : enum_values) names.push_back("'" + e.first + "'");
      std::string text = "{";  // built in steps: GCC 12 warns falsely on "{" + join(...)
      text += join(names, ", ");
      text += "}";
      return text;
    } else {
      return param_value::Codec<T>::kTypeName;
    }
  }

  std::string print(const T& value) const {
    if constexpr (kIsEnum) {
      for (auto& e : enum_values)
        if (e.second == value) return e.first;
      return std::to_string(static_cast<int>(value));
    } else {
      return param_value::Codec<T>::print(value);
    }
  }

  T parse(const std::string& text) const {
    if constexpr (kIsEnum) {
      std::vector<std::string> names;
      for (auto& e : enum_values) {
        if (e.first == text) return e.second;
        names.push_back(e.first);
      }
      throw InputError("'" + text + "' is not one of " + type_name() + did_you_mean(text, names));
    } else {
      T value = param_value::Codec<T>::parse(text);
      if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
        if ((lower && value < *lower) || (upper && value > *upper))
          throw InputError(text + " is out of range; allowed " + range_text());
      }
      return value;
    }
  }

  std::string range_text() const {
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
      std::string lo = lower ? param_value::Codec<T>::print(*lower) : "-inf";
      std::string hi = upper ? param_value::Codec<T>::print(*upper) : "inf";
      return "[" + lo + ", " + hi + (upper ? "]" : ")");
    }
    return "";
  }
};

// Returned by ParamDecl::field; each call refines the field's declaration.
template <typename P, typename T>
class FieldBuilder {
 public:
  FieldBuilder(std::shared_ptr<ParamField<P>> field, T P::*member)
      : field_(std::move(field)), member_(member) {
    field_->info.required = true;
    rebuild();
  }

  FieldBuilder& set_default(T value) {
    field_->info.required = false;
    field_->info.default_text = rules_.print(value);
    auto member = member_;
    field_->set_default = [member, value](P& p) { p.*member = value; };
    return *this;
  }
  // Inclusive bounds for numbers; checked when a value is parsed.
  FieldBuilder& set_range(T lower, T upper) {
    rules_.lower = lower;
    rules_.upper = upper;
    return rebuild();
  }
  FieldBuilder& set_lower_bound(T lower) {
    rules_.lower = lower;
    return rebuild();
  }
  // For enum fields: the accepted spelling of each value.
  FieldBuilder& add_enum(const std::string& name, T value) {
    rules_.enum_values.emplace_back(name, value);
    return rebuild();
  }
  FieldBuilder& describe(const std::string& text) {
    field_->info.description = text;
    return *this;
  }

 private:
  FieldBuilder& rebuild() {
    field_->info.type = rules_.type_name();
    if (!field_->info.required && field_->set_default) {
      P probe{};
      field_->set_default(probe);
      field_->info.default_text = rules_.print(probe.*member_);
    }
    auto rules = rules_;
    auto member = member_;
    field_->parse = [rules, member](P& p, const std::string& text) {
      p.*member = rules.parse(text);
    };
    field_->print = [rules, member](const P& p) { return rules.print(p.*member); };
    return *this;
  }

  std::shared_ptr<ParamField<P>> field_;
  T P::*member_;
  FieldRules<T> rules_;
};

template <typename P>
class ParamDecl {
 public:
  template <typename T>
  FieldBuilder<P, T> field(const std::string& name, T P::*member) {
    auto f = std::make_shared<ParamField<P>>();
    f->info.name = name;
    fields_.push_back(f);
    return FieldBuilder<P, T>(f, member);
  }
  const std::vector<std::shared_ptr<ParamField<P>>>& fields() const { return fields_; }

 private:
  std::vector<std::shared_ptr<ParamField<P>>> fields_;
};

template <typename Derived>
struct Params {
  // The declaration, built once from Derived::declare.
  static const ParamDecl<Derived>& decl() {
    static const ParamDecl<Derived> d = [] {
      ParamDecl<Derived> built;
      Derived::declare(built);
      return built;
    }();
    return d;
  }

  // Sets every field from `values` (unset fields take their defaults).
  // `owner` names what the parameters are for, e.g. "Convolution 'conv1'".
  // Unknown names, bad values and missing required fields throw InputError.
  static Derived from_strings(const std::map<std::string, std::string>& values,
                              const std::string& owner) {
    Derived p{};
    const auto& fields = decl().fields();
    for (const auto& f : fields)
      if (f->set_default) f->set_default(p);
    std::vector<std::string> names;
    for (const auto& f : fields) names.push_back(f->info.name);
    for (const auto& [key, text] : values) {
      const ParamField<Derived>* field = nullptr;
      for (const auto& f : fields)
        if (f->info.name == key) field = f.get();
      if (field == nullptr)
        throw InputError(owner + ": unknown parameter '" + key + "'" + did_you_mean(key, names) +
                         "; parameters are: " + (names.empty() ? "(none)" : join(names, ", ")));
      try {
        field->parse(p, text);
      } catch (const InputError& e) {
        throw InputError(owner + ": parameter '" + key + "': " + e.what());
      }
    }
    for (const auto& f : fields)
      if (f->info.required && values.find(f->info.name) == values.end())
        throw InputError(owner + ": required parameter '" + f->info.name + "' (" + f->info.type +
                         ") is missing" +
                         (f->info.description.empty() ? "" : ": " + f->info.description));
    return p;
  }

  // From a YAML mapping (values as in param_yaml.h); errors are prefixed
  // with the mapping's file:line:column.
  static Derived from_yaml(const YAML::Node& mapping, const std::string& file,
                           const std::string& owner, const std::vector<std::string>& skip = {}) {
    auto values = yaml_to_attr_strings(mapping, file, skip);
    try {
      return from_strings(values, owner);
    } catch (const InputError& e) {
      throw InputError(yaml_location(mapping, file) + ": " + e.what());
    }
  }

  // Every field as MXNet's attribute strings.
  std::map<std::string, std::string> to_strings() const {
    std::map<std::string, std::string> out;
    for (const auto& f : decl().fields())
      out[f->info.name] = f->print(static_cast<const Derived&>(*this));
    return out;
  }

  static std::vector<ParamFieldInfo> field_infos() {
    std::vector<ParamFieldInfo> out;
    for (const auto& f : decl().fields()) out.push_back(f->info);
    return out;
  }
};

}  // namespace mx

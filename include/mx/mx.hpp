// mx's C++ API: a header-only C++17 layer over the C API (c_api.h), so it
// shares libmx.so's ABI and needs no C++ symbols from the library. Every
// object owns its C handle (RAII); a failed call throws mx::Error with
// MXGetLastError's message. docs/library.md has an example.
//
//   mx::NDArray x = mx::NDArray::from_vector({1, 2, 3}, {3});
//   x.attach_grad();
//   mx::NDArray y;
//   {
//     mx::autograd::record recording;           // recording and training mode
//     y = mx::op("sum", {x * x});
//   }
//   y.backward();                               // x.grad() is 2x
//
// Threads: as the C API's (c_api.h): objects may be used from several
// threads when no call changes them at the same time; autograd's switches
// are per thread.
#ifndef MX_MX_HPP_
#define MX_MX_HPP_

#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "mx/c_api.h"

namespace mx {

// A failed call: what MXGetLastError said, e.g. "MXImperativeInvoke:
// FullyConnected: input 'weight': shape (4, 3) conflicts with (2, 3)".
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {
inline void check(int rc) {
  if (rc != 0) throw Error(MXGetLastError());
}
// C strings of a parameter map, in one order.
struct CStrings {
  explicit CStrings(const std::map<std::string, std::string>& params) {
    for (const auto& [k, v] : params) {
      keys.push_back(k.c_str());
      vals.push_back(v.c_str());
    }
  }
  std::vector<const char*> keys, vals;
};
}  // namespace detail

using Shape = std::vector<mx_uint>;
using Params = std::map<std::string, std::string>;

// MXNet's type flags.
enum class DType : int {
  float32 = 0,
  float64 = 1,
  float16 = 2,
  uint8 = 3,
  int32 = 4,
  int8 = 5,
  int64 = 6
};
template <typename T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<float>() {
  return DType::float32;
}
template <>
constexpr DType dtype_of<double>() {
  return DType::float64;
}
template <>
constexpr DType dtype_of<uint8_t>() {
  return DType::uint8;
}
template <>
constexpr DType dtype_of<int32_t>() {
  return DType::int32;
}
template <>
constexpr DType dtype_of<int8_t>() {
  return DType::int8;
}
template <>
constexpr DType dtype_of<int64_t>() {
  return DType::int64;
}

struct Context {
  int dev_type = 1;  // 1 cpu, 2 gpu
  int dev_id = 0;
  static Context cpu(int id = 0) { return {1, id}; }
  static Context gpu(int id = 0) { return {2, id}; }
  bool operator==(const Context& o) const { return dev_type == o.dev_type && dev_id == o.dev_id; }
};

enum class GradReq : mx_uint { null = 0, write = 1, add = 3 };

// An array on a device. Copies share the array (as MXNet's Python
// NDArrays do); copy() makes a new one. Operations are pushed to mx's engine
// and return at once; reading values waits for them.
class NDArray {
 public:
  // A none array.
  NDArray() = default;
  // Takes ownership of a handle from the C API.
  explicit NDArray(NDArrayHandle handle) : h_(handle, [](void* h) { MXNDArrayFree(h); }) {}
  // New memory of `shape` (values undefined).
  explicit NDArray(const Shape& shape, Context ctx = Context::cpu(), DType dtype = DType::float32) {
    NDArrayHandle h = nullptr;
    detail::check(MXNDArrayCreateEx(shape.data(), static_cast<mx_uint>(shape.size()), ctx.dev_type,
                                    ctx.dev_id, 0, static_cast<int>(dtype), &h));
    *this = NDArray(h);
  }
  template <typename T>
  static NDArray from_vector(const std::vector<T>& values, const Shape& shape,
                             Context ctx = Context::cpu()) {
    NDArray a(shape, ctx, dtype_of<T>());
    a.copy_from(values.data(), values.size());
    return a;
  }
  static NDArray from_vector(std::initializer_list<float> values, const Shape& shape,
                             Context ctx = Context::cpu()) {
    return from_vector(std::vector<float>(values), shape, ctx);
  }
  static NDArray full(const Shape& shape, float value, Context ctx = Context::cpu());
  static NDArray zeros(const Shape& shape, Context ctx = Context::cpu()) {
    return full(shape, 0.0f, ctx);
  }

  NDArrayHandle handle() const { return h_.get(); }
  bool is_none() const { return h_ == nullptr; }

  Shape shape() const {
    mx_uint ndim = 0;
    const mx_uint* dims = nullptr;
    detail::check(MXNDArrayGetShape(handle(), &ndim, &dims));
    return Shape(dims, dims + ndim);
  }
  size_t size() const {
    size_t n = 1;
    for (mx_uint d : shape()) n *= d;
    return n;
  }
  DType dtype() const {
    int t = 0;
    detail::check(MXNDArrayGetDType(handle(), &t));
    return static_cast<DType>(t);
  }
  Context context() const {
    Context c;
    detail::check(MXNDArrayGetContext(handle(), &c.dev_type, &c.dev_id));
    return c;
  }

  // Copies `count` elements (the array's size, of its element type) in.
  void copy_from(const void* data, size_t count) {
    detail::check(MXNDArraySyncCopyFromCPU(handle(), data, count));
  }
  // The values (waits for them); T must be the element type.
  template <typename T = float>
  std::vector<T> to_vector() const {
    if (dtype() != dtype_of<T>()) throw Error("to_vector: the array's element type differs");
    std::vector<T> v(size());
    detail::check(MXNDArraySyncCopyToCPU(handle(), v.data(), v.size()));
    return v;
  }
  void wait_to_read() const { detail::check(MXNDArrayWaitToRead(handle())); }
  static void wait_all() { detail::check(MXNDArrayWaitAll()); }

  NDArray copy() const;
  // Views sharing memory (not recorded by autograd).
  NDArray slice(mx_uint begin, mx_uint end) const {
    NDArrayHandle h = nullptr;
    detail::check(MXNDArraySlice(handle(), begin, end, &h));
    return NDArray(h);
  }
  NDArray reshape(const std::vector<int>& dims) const {
    NDArrayHandle h = nullptr;
    std::vector<int> d = dims;
    detail::check(MXNDArrayReshape(handle(), static_cast<int>(d.size()), d.data(), &h));
    return NDArray(h);
  }

  // Autograd: gradients of this array go into a new zero buffer.
  NDArray& attach_grad(GradReq req = GradReq::write) {
    NDArray g = zeros(shape(), context());
    if (dtype() != DType::float32) {  // a buffer of the array's own type
      g = NDArray(shape(), context(), dtype());
      g.fill_zero();
    }
    NDArrayHandle v = handle(), gh = g.handle();
    mx_uint r = static_cast<mx_uint>(req);
    detail::check(MXAutogradMarkVariables(1, &v, &r, &gh));
    return *this;
  }
  // The gradient buffer (a none array when not attached).
  NDArray grad() const {
    NDArrayHandle h = nullptr;
    detail::check(MXNDArrayGetGrad(handle(), &h));
    return h ? NDArray(h) : NDArray();
  }
  // The same values as a constant for autograd.
  NDArray detach() const {
    NDArrayHandle h = nullptr;
    detail::check(MXNDArrayDetach(handle(), &h));
    return NDArray(h);
  }
  // Backward from this array (ones, or `head_grad`) into the attached buffers.
  void backward(const NDArray& head_grad = NDArray(), bool retain_graph = false) const {
    NDArrayHandle h = handle(), g = head_grad.handle();
    detail::check(MXAutogradBackward(1, &h, head_grad.is_none() ? nullptr : &g, retain_graph));
  }

  NDArray& operator+=(const NDArray& b);
  NDArray& operator-=(const NDArray& b);
  NDArray& operator*=(const NDArray& b);
  NDArray& operator/=(const NDArray& b);
  NDArray& operator+=(float s);
  NDArray& operator-=(float s);
  NDArray& operator*=(float s);
  NDArray& operator/=(float s);

 private:
  void fill_zero();
  std::shared_ptr<void> h_;
};

// Runs operator `name` (MXNet's name) on `inputs` (then its auxiliary
// states) with string parameters; returns every visible output.
inline std::vector<NDArray> op_outputs(const std::string& name, const std::vector<NDArray>& inputs,
                                       const Params& params = {}) {
  OpHandle creator = nullptr;
  detail::check(NNGetOpHandle(name.c_str(), &creator));
  std::vector<NDArrayHandle> in;
  for (const auto& a : inputs) in.push_back(a.handle());
  detail::CStrings p(params);
  int n = 0;
  NDArrayHandle* outs = nullptr;
  detail::check(MXImperativeInvoke(creator, static_cast<int>(in.size()), in.data(), &n, &outs,
                                   static_cast<int>(p.keys.size()), p.keys.data(), p.vals.data()));
  std::vector<NDArray> result;
  for (int i = 0; i < n; ++i) result.emplace_back(outs[i]);
  return result;
}

// The first output: mx::op("FullyConnected", {x, w, b}, {{"num_hidden", "10"}}).
inline NDArray op(const std::string& name, const std::vector<NDArray>& inputs,
                  const Params& params = {}) {
  return op_outputs(name, inputs, params).at(0);
}

// Runs an operator into given arrays (which may be inputs: in place).
inline void op_into(const std::string& name, const std::vector<NDArray>& inputs,
                    const std::vector<NDArray>& outputs, const Params& params = {}) {
  OpHandle creator = nullptr;
  detail::check(NNGetOpHandle(name.c_str(), &creator));
  std::vector<NDArrayHandle> in, out;
  for (const auto& a : inputs) in.push_back(a.handle());
  for (const auto& a : outputs) out.push_back(a.handle());
  detail::CStrings p(params);
  int n = static_cast<int>(out.size());
  NDArrayHandle* out_list = out.data();
  detail::check(MXImperativeInvoke(creator, static_cast<int>(in.size()), in.data(), &n, &out_list,
                                   static_cast<int>(p.keys.size()), p.keys.data(), p.vals.data()));
}

namespace detail {
// A float as text that parses back to the same float.
inline std::string float_text(float s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", static_cast<double>(s));
  return text;
}
inline Params scalar(float s) { return {{"scalar", float_text(s)}}; }
}  // namespace detail

inline NDArray NDArray::full(const Shape& shape, float value, Context ctx) {
  NDArray a(shape, ctx);
  std::vector<float> v(a.size(), value);
  a.copy_from(v.data(), v.size());
  return a;
}
inline NDArray NDArray::copy() const { return op("_copy", {*this}); }
inline void NDArray::fill_zero() { op_into("zeros_like", {*this}, {*this}); }

// Element-wise arithmetic through the registry's operators (recorded by
// autograd like any operator call).
inline NDArray operator+(const NDArray& a, const NDArray& b) { return op("elemwise_add", {a, b}); }
inline NDArray operator-(const NDArray& a, const NDArray& b) { return op("elemwise_sub", {a, b}); }
inline NDArray operator*(const NDArray& a, const NDArray& b) { return op("elemwise_mul", {a, b}); }
inline NDArray operator/(const NDArray& a, const NDArray& b) { return op("elemwise_div", {a, b}); }
inline NDArray operator+(const NDArray& a, float s) {
  return op("_plus_scalar", {a}, detail::scalar(s));
}
inline NDArray operator-(const NDArray& a, float s) {
  return op("_minus_scalar", {a}, detail::scalar(s));
}
inline NDArray operator*(const NDArray& a, float s) {
  return op("_mul_scalar", {a}, detail::scalar(s));
}
inline NDArray operator/(const NDArray& a, float s) {
  return op("_div_scalar", {a}, detail::scalar(s));
}
inline NDArray operator+(float s, const NDArray& a) { return a + s; }
inline NDArray operator-(float s, const NDArray& a) {
  return op("_rminus_scalar", {a}, detail::scalar(s));
}
inline NDArray operator*(float s, const NDArray& a) { return a * s; }
inline NDArray operator/(float s, const NDArray& a) {
  return op("_rdiv_scalar", {a}, detail::scalar(s));
}
inline NDArray operator-(const NDArray& a) { return op("negative", {a}); }

inline NDArray& NDArray::operator+=(const NDArray& b) {
  op_into("elemwise_add", {*this, b}, {*this});
  return *this;
}
inline NDArray& NDArray::operator-=(const NDArray& b) {
  op_into("elemwise_sub", {*this, b}, {*this});
  return *this;
}
inline NDArray& NDArray::operator*=(const NDArray& b) {
  op_into("elemwise_mul", {*this, b}, {*this});
  return *this;
}
inline NDArray& NDArray::operator/=(const NDArray& b) {
  op_into("elemwise_div", {*this, b}, {*this});
  return *this;
}
inline NDArray& NDArray::operator+=(float s) {
  op_into("_plus_scalar", {*this}, {*this}, detail::scalar(s));
  return *this;
}
inline NDArray& NDArray::operator-=(float s) {
  op_into("_minus_scalar", {*this}, {*this}, detail::scalar(s));
  return *this;
}
inline NDArray& NDArray::operator*=(float s) {
  op_into("_mul_scalar", {*this}, {*this}, detail::scalar(s));
  return *this;
}
inline NDArray& NDArray::operator/=(float s) {
  op_into("_div_scalar", {*this}, {*this}, detail::scalar(s));
  return *this;
}

// Saves arrays to / loads them from a .params file (MXNet's format).
inline void save(const std::string& path, const std::map<std::string, NDArray>& arrays) {
  std::vector<const char*> keys;
  std::vector<NDArrayHandle> handles;
  for (const auto& [k, a] : arrays) {
    keys.push_back(k.c_str());
    handles.push_back(a.handle());
  }
  detail::check(MXNDArraySave(path.c_str(), static_cast<mx_uint>(handles.size()), handles.data(),
                              keys.data()));
}
inline std::map<std::string, NDArray> load(const std::string& path) {
  mx_uint n = 0, names_n = 0;
  NDArrayHandle* handles = nullptr;
  const char** names = nullptr;
  detail::check(MXNDArrayLoad(path.c_str(), &n, &handles, &names_n, &names));
  std::map<std::string, NDArray> out;
  for (mx_uint i = 0; i < n; ++i)
    out[names_n == n ? names[i] : std::to_string(i)] = NDArray(handles[i]);
  return out;
}

inline void random_seed(int seed) { detail::check(MXRandomSeed(seed)); }

namespace autograd {

inline bool is_recording() {
  bool on = false;
  detail::check(MXAutogradIsRecording(&on));
  return on;
}
inline bool is_training() {
  bool on = false;
  detail::check(MXAutogradIsTraining(&on));
  return on;
}
inline bool set_recording(bool on) {
  int prev = 0;
  detail::check(MXAutogradSetIsRecording(on ? 1 : 0, &prev));
  return prev != 0;
}
inline bool set_training(bool on) {
  int prev = 0;
  detail::check(MXAutogradSetIsTraining(on ? 1 : 0, &prev));
  return prev != 0;
}

// Records operator calls in this thread for the scope (and, as MXNet's
// autograd.record(train_mode=True), runs them in training mode).
class record {
 public:
  explicit record(bool train_mode = true)
      : was_recording_(set_recording(true)), was_training_(set_training(train_mode)) {}
  ~record() {
    MXAutogradSetIsRecording(was_recording_ ? 1 : 0, &ignored_);
    MXAutogradSetIsTraining(was_training_ ? 1 : 0, &ignored_);
  }
  record(const record&) = delete;
  record& operator=(const record&) = delete;

 private:
  bool was_recording_, was_training_;
  int ignored_ = 0;
};

// Stops recording for the scope (MXNet's autograd.pause).
class pause {
 public:
  explicit pause(bool train_mode = false)
      : was_recording_(set_recording(false)), was_training_(set_training(train_mode)) {}
  ~pause() {
    MXAutogradSetIsRecording(was_recording_ ? 1 : 0, &ignored_);
    MXAutogradSetIsTraining(was_training_ ? 1 : 0, &ignored_);
  }
  pause(const pause&) = delete;
  pause& operator=(const pause&) = delete;

 private:
  bool was_recording_, was_training_;
  int ignored_ = 0;
};

// Backward from several heads (head_grads: none, or one per head).
inline void backward(const std::vector<NDArray>& heads, const std::vector<NDArray>& head_grads = {},
                     bool retain_graph = false) {
  std::vector<NDArrayHandle> h, g;
  for (const auto& a : heads) h.push_back(a.handle());
  for (const auto& a : head_grads) g.push_back(a.handle());
  detail::check(MXAutogradBackward(static_cast<mx_uint>(h.size()), h.data(),
                                   g.empty() ? nullptr : g.data(), retain_graph ? 1 : 0));
}

}  // namespace autograd

// A symbolic graph. Copies share it.
class Symbol {
 public:
  Symbol() = default;
  explicit Symbol(SymbolHandle h) : h_(h, [](void* s) { MXSymbolFree(s); }) {}
  static Symbol variable(const std::string& name) {
    SymbolHandle h = nullptr;
    detail::check(MXSymbolCreateVariable(name.c_str(), &h));
    return Symbol(h);
  }
  // Operator `op` named `name` applied to inputs by position; inputs not
  // given (weights, biases) become variables NAME_INPUT.
  static Symbol op(const std::string& op_name, const std::string& name,
                   const std::vector<Symbol>& inputs, const Params& params = {}) {
    OpHandle creator = nullptr;
    detail::check(NNGetOpHandle(op_name.c_str(), &creator));
    detail::CStrings p(params);
    SymbolHandle h = nullptr;
    detail::check(MXSymbolCreateAtomicSymbol(creator, static_cast<mx_uint>(p.keys.size()),
                                             p.keys.data(), p.vals.data(), &h));
    Symbol s(h);
    std::vector<SymbolHandle> in;
    for (const auto& i : inputs) in.push_back(i.handle());
    detail::check(
        MXSymbolCompose(h, name.c_str(), static_cast<mx_uint>(in.size()), nullptr, in.data()));
    return s;
  }
  static Symbol group(const std::vector<Symbol>& symbols) {
    std::vector<SymbolHandle> in;
    for (const auto& s : symbols) in.push_back(s.handle());
    SymbolHandle h = nullptr;
    detail::check(MXSymbolCreateGroup(static_cast<mx_uint>(in.size()), in.data(), &h));
    return Symbol(h);
  }
  static Symbol from_json(const std::string& json) {
    SymbolHandle h = nullptr;
    detail::check(MXSymbolCreateFromJSON(json.c_str(), &h));
    return Symbol(h);
  }
  static Symbol load(const std::string& path) {
    SymbolHandle h = nullptr;
    detail::check(MXSymbolCreateFromFile(path.c_str(), &h));
    return Symbol(h);
  }
  // A network in mx's YAML language (docs/config.md).
  static Symbol from_yaml(const std::string& yaml) {
    SymbolHandle h = nullptr;
    detail::check(MXSymbolCreateFromYAML(yaml.c_str(), &h));
    return Symbol(h);
  }

  SymbolHandle handle() const { return h_.get(); }
  std::string to_json() const {
    const char* json = nullptr;
    detail::check(MXSymbolSaveToJSON(handle(), &json));
    return json;
  }
  void save(const std::string& path) const {
    detail::check(MXSymbolSaveToFile(handle(), path.c_str()));
  }
  std::vector<std::string> list_arguments() const { return list(MXSymbolListArguments); }
  std::vector<std::string> list_outputs() const { return list(MXSymbolListOutputs); }
  std::vector<std::string> list_auxiliary_states() const {
    return list(MXSymbolListAuxiliaryStates);
  }
  Symbol operator[](mx_uint index) const {
    SymbolHandle h = nullptr;
    detail::check(MXSymbolGetOutput(handle(), index, &h));
    return Symbol(h);
  }
  Symbol get_internals() const {
    SymbolHandle h = nullptr;
    detail::check(MXSymbolGetInternals(handle(), &h));
    return Symbol(h);
  }

  struct Shapes {
    std::vector<Shape> arguments, outputs, aux;
    bool complete = false;
  };
  // Shapes from some arguments' shapes.
  Shapes infer_shape(const std::map<std::string, Shape>& known) const;

 private:
  std::vector<std::string> list(int (*fn)(SymbolHandle, mx_uint*, const char***)) const {
    mx_uint n = 0;
    const char** names = nullptr;
    detail::check(fn(handle(), &n, &names));
    return std::vector<std::string>(names, names + n);
  }
  std::shared_ptr<void> h_;
};

inline Symbol::Shapes Symbol::infer_shape(const std::map<std::string, Shape>& known) const {
  std::vector<const char*> keys;
  std::vector<mx_uint> ind{0}, data;
  for (const auto& [k, s] : known) {
    keys.push_back(k.c_str());
    data.insert(data.end(), s.begin(), s.end());
    ind.push_back(static_cast<mx_uint>(data.size()));
  }
  mx_uint n[3];
  const mx_uint* nd[3];
  const mx_uint** d[3];
  int complete = 0;
  detail::check(MXSymbolInferShape(handle(), static_cast<mx_uint>(keys.size()), keys.data(),
                                   ind.data(), data.data(), &n[0], &nd[0], &d[0], &n[1], &nd[1],
                                   &d[1], &n[2], &nd[2], &d[2], &complete));
  Shapes out;
  std::vector<Shape>* lists[3] = {&out.arguments, &out.outputs, &out.aux};
  for (int k = 0; k < 3; ++k)
    for (mx_uint i = 0; i < n[k]; ++i) lists[k]->emplace_back(d[k][i], d[k][i] + nd[k][i]);
  out.complete = complete != 0;
  return out;
}

// A symbol bound to arrays (MXExecutorBind). args, grads (none: no
// gradient) and grad_reqs in Symbol::list_arguments order; aux in
// list_auxiliary_states order.
class Executor {
 public:
  Executor(const Symbol& symbol, Context ctx, const std::vector<NDArray>& args,
           const std::vector<NDArray>& grads = {}, const std::vector<GradReq>& grad_reqs = {},
           const std::vector<NDArray>& aux = {}) {
    std::vector<NDArrayHandle> a, g, x;
    std::vector<mx_uint> r;
    for (const auto& i : args) a.push_back(i.handle());
    for (const auto& i : grads) g.push_back(i.handle());
    for (auto req : grad_reqs) r.push_back(static_cast<mx_uint>(req));
    for (const auto& i : aux) x.push_back(i.handle());
    if (!g.empty() && g.size() != a.size())
      throw Error("Executor: one gradient (or none) per argument");
    if (!r.empty() && r.size() != a.size()) throw Error("Executor: one grad_req per argument");
    ExecutorHandle h = nullptr;
    detail::check(MXExecutorBind(symbol.handle(), ctx.dev_type, ctx.dev_id,
                                 static_cast<mx_uint>(a.size()), a.data(),
                                 g.empty() ? nullptr : g.data(), r.empty() ? nullptr : r.data(),
                                 static_cast<mx_uint>(x.size()), x.data(), &h));
    h_.reset(h);
  }
  ExecutorHandle handle() const { return h_.get(); }
  void forward(bool is_train) { detail::check(MXExecutorForward(handle(), is_train ? 1 : 0)); }
  void backward(const std::vector<NDArray>& head_grads = {}) {
    std::vector<NDArrayHandle> g;
    for (const auto& i : head_grads) g.push_back(i.handle());
    detail::check(MXExecutorBackward(handle(), static_cast<mx_uint>(g.size()), g.data()));
  }
  std::vector<NDArray> outputs() const {
    mx_uint n = 0;
    NDArrayHandle* outs = nullptr;
    detail::check(MXExecutorOutputs(handle(), &n, &outs));
    std::vector<NDArray> result;
    for (mx_uint i = 0; i < n; ++i) result.emplace_back(outs[i]);
    return result;
  }

 private:
  struct Free {
    void operator()(void* h) const { MXExecutorFree(h); }
  };
  std::unique_ptr<void, Free> h_;
};

// A KVStore: "local", "device", "dist_sync", "dist_async" (c_api.h).
class KVStore {
 public:
  explicit KVStore(const std::string& type = "local") {
    KVStoreHandle h = nullptr;
    detail::check(MXKVStoreCreate(type.c_str(), &h));
    h_.reset(h);
  }
  KVStoreHandle handle() const { return h_.get(); }
  void init(int key, const NDArray& value) {
    NDArrayHandle v = value.handle();
    detail::check(MXKVStoreInit(handle(), 1, &key, &v));
  }
  // values: one per device, summed.
  void push(int key, const std::vector<NDArray>& values, int priority = 0) {
    std::vector<int> keys(values.size(), key);
    std::vector<NDArrayHandle> v;
    for (const auto& a : values) v.push_back(a.handle());
    detail::check(
        MXKVStorePush(handle(), static_cast<mx_uint>(v.size()), keys.data(), v.data(), priority));
  }
  void pull(int key, const std::vector<NDArray>& outputs, int priority = 0) {
    std::vector<int> keys(outputs.size(), key);
    std::vector<NDArrayHandle> v;
    for (const auto& a : outputs) v.push_back(a.handle());
    detail::check(
        MXKVStorePull(handle(), static_cast<mx_uint>(v.size()), keys.data(), v.data(), priority));
  }
  void set_optimizer(const std::string& name, const Params& params = {}) {
    detail::CStrings p(params);
    detail::check(MXKVStoreSetOptimizer(handle(), name.c_str(), static_cast<mx_uint>(p.keys.size()),
                                        p.keys.data(), p.vals.data()));
  }
  int rank() const {
    int r = 0;
    detail::check(MXKVStoreGetRank(handle(), &r));
    return r;
  }
  int num_workers() const {
    int n = 0;
    detail::check(MXKVStoreGetGroupSize(handle(), &n));
    return n;
  }
  void barrier() { detail::check(MXKVStoreBarrier(handle())); }
  // Frees the store now, reporting a failure (the destructor cannot).
  void close() {
    KVStoreHandle h = h_.release();
    detail::check(MXKVStoreFree(h));
  }

 private:
  struct Free {
    void operator()(void* h) const { MXKVStoreFree(h); }
  };
  std::unique_ptr<void, Free> h_;
};

// A data iterator by MXNet's name ("MNISTIter", "ImageRecordIter",
// "CSVIter") with string parameters.
class DataIter {
 public:
  DataIter(const std::string& type, const Params& params) {
    mx_uint n = 0;
    DataIterCreator* creators = nullptr;
    detail::check(MXListDataIters(&n, &creators));
    for (mx_uint i = 0; i < n; ++i) {
      const char *name, *description;
      mx_uint num_args;
      const char **names, **types, **descriptions;
      detail::check(MXDataIterGetIterInfo(creators[i], &name, &description, &num_args, &names,
                                          &types, &descriptions));
      if (type != name) continue;
      detail::CStrings p(params);
      DataIterHandle h = nullptr;
      detail::check(MXDataIterCreateIter(creators[i], static_cast<mx_uint>(p.keys.size()),
                                         p.keys.data(), p.vals.data(), &h));
      h_.reset(h);
      return;
    }
    throw Error("DataIter: no iterator type '" + type + "'");
  }
  // Moves to the next batch; false at the end of the epoch.
  bool next() {
    int more = 0;
    detail::check(MXDataIterNext(h_.get(), &more));
    return more != 0;
  }
  void reset() { detail::check(MXDataIterBeforeFirst(h_.get())); }
  NDArray data() const {
    NDArrayHandle h = nullptr;
    detail::check(MXDataIterGetData(h_.get(), &h));
    return NDArray(h);
  }
  NDArray label() const {
    NDArrayHandle h = nullptr;
    detail::check(MXDataIterGetLabel(h_.get(), &h));
    return NDArray(h);
  }
  int pad() const {
    int p = 0;
    detail::check(MXDataIterGetPadNum(h_.get(), &p));
    return p;
  }

 private:
  struct Free {
    void operator()(void* h) const { MXDataIterFree(h); }
  };
  std::unique_ptr<void, Free> h_;
};

}  // namespace mx

#endif  // MX_MX_HPP_

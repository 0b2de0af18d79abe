// Context: the device an array lives on and an operation runs on.
// Device type numbers are MXNet's (they are written into .params files).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace mx {

enum class DeviceType : int32_t { kCPU = 1, kGPU = 2, kCPUPinned = 3 };

// Which kernel of an operator runs on a device: pinned host memory runs CPU
// kernels. The values index an operator's kernel table.
enum class DeviceKind { kCPU = 0, kGPU = 1 };
inline const char* device_kind_name(DeviceKind kind) {
  return kind == DeviceKind::kGPU ? "GPU" : "CPU";
}

struct Context {
  DeviceType type = DeviceType::kCPU;
  int32_t id = 0;

  static Context cpu(int id = 0) { return {DeviceType::kCPU, id}; }
  static Context gpu(int id = 0) { return {DeviceType::kGPU, id}; }

  bool is_gpu() const { return type == DeviceType::kGPU; }
  DeviceKind kind() const { return is_gpu() ? DeviceKind::kGPU : DeviceKind::kCPU; }
  bool operator==(const Context& o) const { return type == o.type && id == o.id; }
  bool operator!=(const Context& o) const { return !(*this == o); }

  // "cpu:0", "gpu:1", "cpu_pinned:0".
  std::string to_string() const;
  // Parses "cpu", "cpu:N", "gpu", "gpu:N", "cpu_pinned:N" (also "gpu(1)").
  // Throws InputError naming the text on failure.
  static Context parse(const std::string& text);
};

}  // namespace mx

template <>
struct std::hash<mx::Context> {
  size_t operator()(const mx::Context& c) const noexcept {
    return std::hash<int64_t>()((static_cast<int64_t>(c.type) << 32) | c.id);
  }
};

// Thin wrappers over the CUDA runtime, so code outside the .cu files needs no
// CUDA headers and a build without CUDA gives clear errors instead of link
// failures. Streams are passed around as void* (a cudaStream_t).
#pragma once

#include <cstddef>

namespace mx::gpu {

// True when mx was built with CUDA.
bool compiled_with_cuda();
// Number of usable GPUs; 0 without CUDA or without a driver/device.
int device_count();
// Throws Error when `device` does not exist.
void set_device(int device);
void* create_stream(int device);
void destroy_stream(void* stream);
// Waits for `stream` (or for the whole device when stream is nullptr);
// throws Error with CUDA's message if a kernel on it failed.
void synchronize(void* stream, int device);
enum class CopyKind { kHostToDevice, kDeviceToHost, kDeviceToDevice };
// Asynchronous copy on `stream`; the caller synchronizes.
void copy(void* dst, const void* src, size_t bytes, CopyKind kind, void* stream);

}  // namespace mx::gpu

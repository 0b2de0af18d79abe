// MX_HOST_DEVICE marks functions that run on both the CPU and a GPU: the
// per-element logic of our own CUDA kernels lives in such functions, so the
// CPU build compiles them and the CPU tests run them.
#pragma once

#if defined(__CUDACC__)
#define MX_HOST_DEVICE __host__ __device__
#else
#define MX_HOST_DEVICE
#endif

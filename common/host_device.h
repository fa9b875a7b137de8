#pragma once
// HERALD_HOST_DEVICE_FN marks an inline function written once for every
// device: under nvcc it is __host__ __device__ (the CUDA kernels call it),
// elsewhere plain inline (the CPU code calls it). Headers of such functions
// (common/math/optimizer_rules.h, worker/device/pooling.h,
// worker/device/elementwise_rules.h) include only the C math library, so
// nvcc compiles them as they are.

#if defined(__CUDACC__)
#define HERALD_HOST_DEVICE_FN __host__ __device__ inline
#else
#define HERALD_HOST_DEVICE_FN inline
#endif

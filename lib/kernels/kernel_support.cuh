// Device and host helpers shared by the kernels of fused_kernels.h
// (rms_norm_kernels.cu, rope_kernels.cu, swiglu_kernels.cu). Element types are
// float (fp32) and std::uint16_t (bf16 bits); every value is widened to fp32,
// and results are rounded back to the element type (round to nearest even) at
// each point where libtorch materialises a tensor of that dtype, so bf16
// results match the libtorch ops up to the order of fp32 sums. Rows are read
// in 16-byte packs (8 bf16 or 4 fp32 values) when the pointers, strides and
// widths allow it, element by element otherwise.
//
// Everything here is in an anonymous namespace, as it was when the kernels
// shared one .cu file: each including .cu gets its own internal copy, so no
// symbol is defined twice at link time; the non-template functions are also
// inline, so a .cu that uses only some of them draws no unused-function warning.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include <cuda_runtime.h>

#include "core/error.h"

namespace nss::kernels {
namespace {

constexpr int kThreads = 256;
constexpr std::int64_t kMaxGrid = 65536;  // grid-stride beyond this

// core/half.h's float_to_bf16: round to nearest even, NaN kept quiet.
__device__ __forceinline__ std::uint16_t to_bf16(float value) {
  const std::uint32_t bits = __float_as_uint(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((bits >> 16) | 0x40u);
  const std::uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>((bits + rounding) >> 16);
}

__device__ __forceinline__ float to_float(float v) {
  return v;
}
__device__ __forceinline__ float to_float(std::uint16_t v) {
  return __uint_as_float(static_cast<std::uint32_t>(v) << 16);
}

template <typename T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ float from_float<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ std::uint16_t from_float<std::uint16_t>(float v) {
  return to_bf16(v);
}

// `v` rounded to T, as fp32: where libtorch holds an intermediate tensor in T.
template <typename T>
__device__ __forceinline__ float round_to(float v) {
  return to_float(from_float<T>(v));
}

template <typename T, int V>
struct alignas(sizeof(T) * V < 16 ? sizeof(T) * V : 16) Pack {
  T v[V];
};

template <typename T, int V>
__device__ __forceinline__ Pack<T, V> load(const T* p) {
  return *reinterpret_cast<const Pack<T, V>*>(p);
}

template <typename T, int V>
__device__ __forceinline__ void store(T* p, const Pack<T, V>& value) {
  *reinterpret_cast<Pack<T, V>*>(p) = value;
}

// Elements per 16-byte pack.
template <typename T>
constexpr int kVec = static_cast<int>(16 / sizeof(T));

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// The sum of `v` over the block (blockDim.x a multiple of 32, blockDim.y 1),
// returned to every thread. Two barriers: a call may follow another at once,
// since no thread writes `total` again before all have passed the second
// barrier of this call, and warp_sums is read only between the two.
__device__ inline float block_sum(float v) {
  __shared__ float warp_sums[32];
  __shared__ float total;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = warp_sum(v);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    const int warps = static_cast<int>(blockDim.x / 32);
    float s = lane < warps ? warp_sums[lane] : 0.0f;
    s = warp_sum(s);
    if (lane == 0) total = s;
  }
  __syncthreads();
  return total;
}

// --- Host side -----------------------------------------------------------------

inline void check_cuda(cudaError_t err, const std::string& what) {
  if (err != cudaSuccess)
    throw InternalError(
        "kernels", what + " failed: " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
}

inline void check_launch(const char* kernel) {
  check_cuda(cudaGetLastError(), std::string(kernel) + " launch");
}

inline void require(bool condition, const char* function, const std::string& message) {
  if (!condition) throw InternalError("kernels", std::string(function) + ": " + message);
}

inline bool aligned16(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}

inline unsigned grid_for(std::int64_t blocks) {
  return static_cast<unsigned>(std::clamp<std::int64_t>(blocks, 1, kMaxGrid));
}

inline cudaStream_t as_stream(void* stream) {
  return static_cast<cudaStream_t>(stream);
}

}  // namespace
}  // namespace nss::kernels

// CUDA kernels of nf4_cuda.h. Each thread of a grid-stride loop handles one
// 32-bit word of packed codes (8 elements, all in one 64-element block) and
// writes them with two 16-byte stores (fp32) or one (bf16) when the buffers
// are aligned for it, element by element otherwise and for the tail of an n
// that is not a multiple of 8. Compiled with -fmad=false; the arithmetic uses
// __fmul_rn/__fadd_rn besides, so no step is ever contracted into an FMA.
#include <algorithm>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>

#include <cuda_runtime.h>

#include "core/error.h"
#include "quant/double_quant.h"
#include "quant/nf4.h"
#include "quant/nf4_cuda.h"

namespace nss::quant {
namespace {

constexpr std::int64_t kBlock = 64;   // kNf4BlockSize
constexpr std::int64_t kGroup = 256;  // kAbsmaxGroupSize
constexpr int kThreads = 256;
constexpr std::int64_t kMaxGrid = 65536;  // grid-stride beyond this

// The NF4 levels and the dynamic map, defined once in nf4.cpp and
// double_quant.cpp: upload_tables() copies them into each device's constant
// memory before its first launch.
__constant__ float kLevels[16];
__constant__ float kDynamicMap[256];

// core/half.h's float_to_bf16: round to nearest even, NaN kept quiet.
__device__ __forceinline__ std::uint16_t to_bf16(float value) {
  const std::uint32_t bits = __float_as_uint(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((bits >> 16) | 0x40u);
  const std::uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>((bits + rounding) >> 16);
}

__device__ __forceinline__ float level_of(const std::uint8_t* packed, std::int64_t i) {
  const std::uint8_t byte = packed[i >> 1];
  return kLevels[(i & 1) == 0 ? byte >> 4 : byte & 15];
}

// The 8 values of word w (elements 8w ... 8w+7), fully in range.
__device__ __forceinline__ void word_values(const std::uint8_t* packed, const float* absmax,
                                            std::int64_t w, bool aligned, float v[8]) {
  std::uint32_t word;
  if (aligned) {
    word = __ldg(reinterpret_cast<const unsigned int*>(packed) + w);
  } else {
    const std::uint8_t* p = packed + 4 * w;
    word = static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
           static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
  }
  const float scale = __ldg(absmax + (8 * w) / kBlock);
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const std::uint32_t byte = (word >> (8 * j)) & 0xffu;
    v[2 * j] = __fmul_rn(kLevels[byte >> 4], scale);
    v[2 * j + 1] = __fmul_rn(kLevels[byte & 15u], scale);
  }
}

// How a dequantised fp32 value is stored: as it is, or rounded to bf16 bits.
struct Fp32Values {
  using Element = float;
  static __device__ __forceinline__ float convert(float v) { return v; }
  // 8 values at a 16-byte aligned address.
  static __device__ __forceinline__ void store8(float* out, const float v[8]) {
    float4* o = reinterpret_cast<float4*>(out);
    o[0] = make_float4(v[0], v[1], v[2], v[3]);
    o[1] = make_float4(v[4], v[5], v[6], v[7]);
  }
};
struct Bf16Values {
  using Element = std::uint16_t;
  static __device__ __forceinline__ std::uint16_t convert(float v) { return to_bf16(v); }
  static __device__ __forceinline__ void store8(std::uint16_t* out, const float v[8]) {
    std::uint32_t h[4];
#pragma unroll
    for (int j = 0; j < 4; ++j)
      h[j] = static_cast<std::uint32_t>(to_bf16(v[2 * j])) |
             static_cast<std::uint32_t>(to_bf16(v[2 * j + 1])) << 16;
    *reinterpret_cast<uint4*>(out) = make_uint4(h[0], h[1], h[2], h[3]);
  }
};

// One thread per word of 8 codes (grid-stride); `aligned_out`: out is 16-byte
// aligned, so whole words are stored as one or two vector stores.
template <class Values>
__global__ void dequant_kernel(const std::uint8_t* __restrict__ packed,
                               const float* __restrict__ absmax, std::int64_t n,
                               typename Values::Element* __restrict__ out, bool aligned_in,
                               bool aligned_out) {
  const std::int64_t words = (n + 7) / 8;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t w = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; w < words;
       w += stride) {
    const std::int64_t first = 8 * w;
    if (first + 8 <= n) {
      float v[8];
      word_values(packed, absmax, w, aligned_in, v);
      if (aligned_out) {
        Values::store8(out + first, v);
      } else {
#pragma unroll
        for (int j = 0; j < 8; ++j) out[first + j] = Values::convert(v[j]);
      }
    } else {  // the tail: fewer than 8 elements, the last byte maybe half padding
      const float scale = absmax[first / kBlock];
      for (std::int64_t i = first; i < n; ++i)
        out[i] = Values::convert(__fmul_rn(level_of(packed, i), scale));
    }
  }
}

__global__ void dequant_absmax_kernel(const std::uint8_t* __restrict__ codes,
                                      const float* __restrict__ group_absmax, std::int64_t blocks,
                                      float offset, float* __restrict__ absmax) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t b = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       b < blocks; b += stride)
    absmax[b] = __fadd_rn(__fmul_rn(kDynamicMap[codes[b]], group_absmax[b / kGroup]), offset);
}

unsigned grid_for(std::int64_t items) {
  return static_cast<unsigned>(
      std::clamp<std::int64_t>((items + kThreads - 1) / kThreads, 1, kMaxGrid));
}

bool aligned(const void* p, std::uintptr_t bytes) {
  return reinterpret_cast<std::uintptr_t>(p) % bytes == 0;
}

void check_cuda(cudaError_t err, const char* what) {
  if (err != cudaSuccess)
    throw InternalError("quant", std::string(what) + " failed: " + cudaGetErrorName(err) + ": " +
                                     cudaGetErrorString(err));
}

void upload_tables() {
  int device = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  static std::mutex mutex;
  static std::set<int> uploaded;
  const std::lock_guard<std::mutex> lock(mutex);
  if (uploaded.count(device) > 0) return;
  static_assert(sizeof(kLevels) == sizeof(float) * 16 &&
                sizeof(kDynamicMap) == sizeof(float) * 256);
  check_cuda(cudaMemcpyToSymbol(kLevels, nf4_levels().data(), sizeof(kLevels)),
             "copying the NF4 levels to the device");
  check_cuda(cudaMemcpyToSymbol(kDynamicMap, dynamic_map().data(), sizeof(kDynamicMap)),
             "copying the dynamic map to the device");
  uploaded.insert(device);
}

void check_launch(const char* kernel) {
  check_cuda(cudaGetLastError(), (std::string(kernel) + " launch").c_str());
}

void check_size(std::int64_t n, const char* what) {
  if (n < 0)
    throw InternalError("quant", std::string(what) + ": negative length " + std::to_string(n));
}

}  // namespace

bool nf4_cuda_compiled() {
  return true;
}

void dequantize_nf4_cuda(const std::uint8_t* packed, const float* absmax, std::int64_t n,
                         float* out, void* stream) {
  check_size(n, "dequantize_nf4_cuda");
  upload_tables();
  if (n == 0) return;
  dequant_kernel<Fp32Values>
      <<<grid_for((n + 7) / 8), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
          packed, absmax, n, out, aligned(packed, 4), aligned(out, 16));
  check_launch("NF4 dequantisation (fp32)");
}

void dequantize_nf4_cuda_bf16(const std::uint8_t* packed, const float* absmax, std::int64_t n,
                              std::uint16_t* out, void* stream) {
  check_size(n, "dequantize_nf4_cuda_bf16");
  upload_tables();
  if (n == 0) return;
  dequant_kernel<Bf16Values>
      <<<grid_for((n + 7) / 8), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
          packed, absmax, n, out, aligned(packed, 4), aligned(out, 16));
  check_launch("NF4 dequantisation (bf16)");
}

void dequantize_absmax_cuda(const std::uint8_t* codes, const float* group_absmax,
                            std::int64_t blocks, float offset, float* absmax, void* stream) {
  check_size(blocks, "dequantize_absmax_cuda");
  upload_tables();
  if (blocks == 0) return;
  dequant_absmax_kernel<<<grid_for(blocks), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      codes, group_absmax, blocks, offset, absmax);
  check_launch("NF4 absmax dequantisation");
}

}  // namespace nss::quant

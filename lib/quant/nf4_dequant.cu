// CUDA kernels of nf4_cuda.h. Each thread of a grid-stride loop handles one
// 32-bit word of packed codes (8 elements, all in one 64-element block) and
// writes them with two 16-byte stores (fp32) or one (bf16) when the buffers
// are aligned for it, element by element otherwise and for the tail of an n
// that is not a multiple of 8. Compiled with -fmad=false; the arithmetic uses
// __fmul_rn/__fadd_rn besides, so no step is ever contracted into an FMA.
#include <algorithm>
#include <cstdint>
#include <string>

#include <cuda_runtime.h>

#include "core/error.h"
#include "quant/nf4_cuda.h"

namespace nss::quant {
namespace {

constexpr std::int64_t kBlock = 64;   // kNf4BlockSize
constexpr std::int64_t kGroup = 256;  // kAbsmaxGroupSize
constexpr int kThreads = 256;
constexpr std::int64_t kMaxGrid = 65536;  // grid-stride beyond this

// nf4.cpp's kLevels, the same fp32 literals.
__constant__ float kLevels[16] = {-1.0f,
                                  -0.6961928009986877f,
                                  -0.5250730514526367f,
                                  -0.39491748809814453f,
                                  -0.28444138169288635f,
                                  -0.18477343022823334f,
                                  -0.09105003625154495f,
                                  0.0f,
                                  0.07958029955625534f,
                                  0.16093020141124725f,
                                  0.24611230194568634f,
                                  0.33791524171829224f,
                                  0.44070982933044434f,
                                  0.5626170039176941f,
                                  0.7229568362236023f,
                                  1.0f};

// double_quant.cpp's kDynamicMap, the same fp32 literals.
__constant__ float kDynamicMap[256] = {
    -0x1.fc6666p-1f,  -0x1.f53334p-1f,  -0x1.eep-1f,      -0x1.e6ccccp-1f,  -0x1.df999ap-1f,
    -0x1.d86666p-1f,  -0x1.d13334p-1f,  -0x1.cap-1f,      -0x1.c2ccccp-1f,  -0x1.bb999ap-1f,
    -0x1.b46666p-1f,  -0x1.ad3334p-1f,  -0x1.a6p-1f,      -0x1.9eccccp-1f,  -0x1.97999ap-1f,
    -0x1.906666p-1f,  -0x1.893334p-1f,  -0x1.82p-1f,      -0x1.7accccp-1f,  -0x1.73999ap-1f,
    -0x1.6c6668p-1f,  -0x1.653334p-1f,  -0x1.5ep-1f,      -0x1.56ccccp-1f,  -0x1.4f999ap-1f,
    -0x1.486668p-1f,  -0x1.413334p-1f,  -0x1.3ap-1f,      -0x1.32ccccp-1f,  -0x1.2b999ap-1f,
    -0x1.246668p-1f,  -0x1.1d3334p-1f,  -0x1.16p-1f,      -0x1.0eccccp-1f,  -0x1.079998p-1f,
    -0x1.006666p-1f,  -0x1.f26664p-2f,  -0x1.e4p-2f,      -0x1.d59998p-2f,  -0x1.c73334p-2f,
    -0x1.b8ccccp-2f,  -0x1.aa6666p-2f,  -0x1.9cp-2f,      -0x1.8d9998p-2f,  -0x1.7f3334p-2f,
    -0x1.70ccccp-2f,  -0x1.626666p-2f,  -0x1.54p-2f,      -0x1.459998p-2f,  -0x1.373334p-2f,
    -0x1.28ccccp-2f,  -0x1.1a6668p-2f,  -0x1.0cp-2f,      -0x1.fb3332p-3f,  -0x1.de6666p-3f,
    -0x1.c1999ap-3f,  -0x1.a4ccccp-3f,  -0x1.88p-3f,      -0x1.6b3334p-3f,  -0x1.4e6666p-3f,
    -0x1.31999ap-3f,  -0x1.14ccccp-3f,  -0x1.fp-4f,       -0x1.b66668p-4f,  -0x1.93d70ap-4f,
    -0x1.8851eep-4f,  -0x1.7ccccep-4f,  -0x1.7147aep-4f,  -0x1.65c29p-4f,   -0x1.5a3d7p-4f,
    -0x1.4eb854p-4f,  -0x1.433334p-4f,  -0x1.37ae14p-4f,  -0x1.2c28f6p-4f,  -0x1.20a3d6p-4f,
    -0x1.151ebap-4f,  -0x1.09999ap-4f,  -0x1.fc28f6p-5f,  -0x1.e51ebap-5f,  -0x1.ce147ap-5f,
    -0x1.b70a3ep-5f,  -0x1.ap-5f,       -0x1.88f5c2p-5f,  -0x1.71eb86p-5f,  -0x1.5ae146p-5f,
    -0x1.43d70ap-5f,  -0x1.2ccccep-5f,  -0x1.15c29p-5f,   -0x1.fd70a4p-6f,  -0x1.cf5c2ap-6f,
    -0x1.a147aep-6f,  -0x1.733334p-6f,  -0x1.451ebap-6f,  -0x1.170a3ep-6f,  -0x1.d1eb86p-7f,
    -0x1.75c29p-7f,   -0x1.3e76c8p-7f,  -0x1.2c083p-7f,   -0x1.19999ap-7f,  -0x1.072b02p-7f,
    -0x1.e978d4p-8f,  -0x1.c49ba6p-8f,  -0x1.9fbe76p-8f,  -0x1.7ae148p-8f,  -0x1.56041ap-8f,
    -0x1.3126e8p-8f,  -0x1.0c49bap-8f,  -0x1.ced914p-9f,  -0x1.851eb8p-9f,  -0x1.3b645ap-9f,
    -0x1.e353f8p-10f, -0x1.4fdf3ap-10f, -0x1.eecbfep-11f, -0x1.b3d07cp-11f, -0x1.78d5p-11f,
    -0x1.3dd982p-11f, -0x1.02de02p-11f, -0x1.8fc506p-12f, -0x1.19ce0ap-12f, -0x1.47ae16p-13f,
    -0x1.743e96p-14f, -0x1.15df66p-14f, -0x1.6f0068p-15f, -0x1.64840cp-16f, -0x1.040bfep-17f,
    -0x1.b43528p-19f, -0x1.27476ep-21f, 0x0p+0f,          0x1.27476ep-21f,  0x1.b43528p-19f,
    0x1.040bfep-17f,  0x1.64840cp-16f,  0x1.6f0068p-15f,  0x1.15df66p-14f,  0x1.743e96p-14f,
    0x1.47ae16p-13f,  0x1.19ce0ap-12f,  0x1.8fc506p-12f,  0x1.02de02p-11f,  0x1.3dd982p-11f,
    0x1.78d5p-11f,    0x1.b3d07cp-11f,  0x1.eecbfep-11f,  0x1.4fdf3ap-10f,  0x1.e353f8p-10f,
    0x1.3b645ap-9f,   0x1.851eb8p-9f,   0x1.ced914p-9f,   0x1.0c49bap-8f,   0x1.3126e8p-8f,
    0x1.56041ap-8f,   0x1.7ae148p-8f,   0x1.9fbe76p-8f,   0x1.c49ba6p-8f,   0x1.e978d4p-8f,
    0x1.072b02p-7f,   0x1.19999ap-7f,   0x1.2c083p-7f,    0x1.3e76c8p-7f,   0x1.75c29p-7f,
    0x1.d1eb86p-7f,   0x1.170a3ep-6f,   0x1.451ebap-6f,   0x1.733334p-6f,   0x1.a147aep-6f,
    0x1.cf5c2ap-6f,   0x1.fd70a4p-6f,   0x1.15c29p-5f,    0x1.2ccccep-5f,   0x1.43d70ap-5f,
    0x1.5ae146p-5f,   0x1.71eb86p-5f,   0x1.88f5c2p-5f,   0x1.ap-5f,        0x1.b70a3ep-5f,
    0x1.ce147ap-5f,   0x1.e51ebap-5f,   0x1.fc28f6p-5f,   0x1.09999ap-4f,   0x1.151ebap-4f,
    0x1.20a3d6p-4f,   0x1.2c28f6p-4f,   0x1.37ae14p-4f,   0x1.433334p-4f,   0x1.4eb854p-4f,
    0x1.5a3d7p-4f,    0x1.65c29p-4f,    0x1.7147aep-4f,   0x1.7ccccep-4f,   0x1.8851eep-4f,
    0x1.93d70ap-4f,   0x1.b66668p-4f,   0x1.fp-4f,        0x1.14ccccp-3f,   0x1.31999ap-3f,
    0x1.4e6666p-3f,   0x1.6b3334p-3f,   0x1.88p-3f,       0x1.a4ccccp-3f,   0x1.c1999ap-3f,
    0x1.de6666p-3f,   0x1.fb3332p-3f,   0x1.0cp-2f,       0x1.1a6668p-2f,   0x1.28ccccp-2f,
    0x1.373334p-2f,   0x1.459998p-2f,   0x1.54p-2f,       0x1.626666p-2f,   0x1.70ccccp-2f,
    0x1.7f3334p-2f,   0x1.8d9998p-2f,   0x1.9cp-2f,       0x1.aa6666p-2f,   0x1.b8ccccp-2f,
    0x1.c73334p-2f,   0x1.d59998p-2f,   0x1.e4p-2f,       0x1.f26664p-2f,   0x1.006666p-1f,
    0x1.079998p-1f,   0x1.0eccccp-1f,   0x1.16p-1f,       0x1.1d3334p-1f,   0x1.246668p-1f,
    0x1.2b999ap-1f,   0x1.32ccccp-1f,   0x1.3ap-1f,       0x1.413334p-1f,   0x1.486668p-1f,
    0x1.4f999ap-1f,   0x1.56ccccp-1f,   0x1.5ep-1f,       0x1.653334p-1f,   0x1.6c6668p-1f,
    0x1.73999ap-1f,   0x1.7accccp-1f,   0x1.82p-1f,       0x1.893334p-1f,   0x1.906666p-1f,
    0x1.97999ap-1f,   0x1.9eccccp-1f,   0x1.a6p-1f,       0x1.ad3334p-1f,   0x1.b46666p-1f,
    0x1.bb999ap-1f,   0x1.c2ccccp-1f,   0x1.cap-1f,       0x1.d13334p-1f,   0x1.d86666p-1f,
    0x1.df999ap-1f,   0x1.e6ccccp-1f,   0x1.eep-1f,       0x1.f53334p-1f,   0x1.fc6666p-1f,
    0x1p+0f};

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

__global__ void dequant_f32_kernel(const std::uint8_t* __restrict__ packed,
                                   const float* __restrict__ absmax, std::int64_t n,
                                   float* __restrict__ out, bool aligned_in, bool aligned_out) {
  const std::int64_t words = (n + 7) / 8;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t w = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; w < words;
       w += stride) {
    const std::int64_t first = 8 * w;
    if (first + 8 <= n) {
      float v[8];
      word_values(packed, absmax, w, aligned_in, v);
      if (aligned_out) {
        float4* o = reinterpret_cast<float4*>(out + first);
        o[0] = make_float4(v[0], v[1], v[2], v[3]);
        o[1] = make_float4(v[4], v[5], v[6], v[7]);
      } else {
#pragma unroll
        for (int j = 0; j < 8; ++j) out[first + j] = v[j];
      }
    } else {  // the tail: fewer than 8 elements, the last byte maybe half padding
      const float scale = absmax[first / kBlock];
      for (std::int64_t i = first; i < n; ++i) out[i] = __fmul_rn(level_of(packed, i), scale);
    }
  }
}

__global__ void dequant_bf16_kernel(const std::uint8_t* __restrict__ packed,
                                    const float* __restrict__ absmax, std::int64_t n,
                                    std::uint16_t* __restrict__ out, bool aligned_in,
                                    bool aligned_out) {
  const std::int64_t words = (n + 7) / 8;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t w = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; w < words;
       w += stride) {
    const std::int64_t first = 8 * w;
    if (first + 8 <= n) {
      float v[8];
      word_values(packed, absmax, w, aligned_in, v);
      std::uint32_t h[4];
#pragma unroll
      for (int j = 0; j < 4; ++j)
        h[j] = static_cast<std::uint32_t>(to_bf16(v[2 * j])) |
               static_cast<std::uint32_t>(to_bf16(v[2 * j + 1])) << 16;
      if (aligned_out) {
        *reinterpret_cast<uint4*>(out + first) = make_uint4(h[0], h[1], h[2], h[3]);
      } else {
#pragma unroll
        for (int j = 0; j < 8; ++j)
          out[first + j] = static_cast<std::uint16_t>(h[j / 2] >> (16 * (j % 2)));
      }
    } else {
      const float scale = absmax[first / kBlock];
      for (std::int64_t i = first; i < n; ++i)
        out[i] = to_bf16(__fmul_rn(level_of(packed, i), scale));
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

void check_launch(const char* kernel) {
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess)
    throw InternalError("quant", std::string(kernel) + " launch failed: " + cudaGetErrorName(err) +
                                     ": " + cudaGetErrorString(err));
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
  if (n == 0) return;
  dequant_f32_kernel<<<grid_for((n + 7) / 8), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      packed, absmax, n, out, aligned(packed, 4), aligned(out, 16));
  check_launch("NF4 dequantisation (fp32)");
}

void dequantize_nf4_cuda_bf16(const std::uint8_t* packed, const float* absmax, std::int64_t n,
                              std::uint16_t* out, void* stream) {
  check_size(n, "dequantize_nf4_cuda_bf16");
  if (n == 0) return;
  dequant_bf16_kernel<<<grid_for((n + 7) / 8), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      packed, absmax, n, out, aligned(packed, 4), aligned(out, 16));
  check_launch("NF4 dequantisation (bf16)");
}

void dequantize_absmax_cuda(const std::uint8_t* codes, const float* group_absmax,
                            std::int64_t blocks, float offset, float* absmax, void* stream) {
  check_size(blocks, "dequantize_absmax_cuda");
  if (blocks == 0) return;
  dequant_absmax_kernel<<<grid_for(blocks), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      codes, group_absmax, blocks, offset, absmax);
  check_launch("NF4 absmax dequantisation");
}

}  // namespace nss::quant

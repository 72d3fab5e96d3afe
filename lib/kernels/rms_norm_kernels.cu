// RMSNorm kernels of fused_kernels.h (helpers in kernel_support.cuh): one block
// per row (grid-stride over rows) with a warp-shuffle then shared-memory block
// reduction; the backward pass's blocks each keep the grad_weight partial sums
// of their rows in a scratch row of their own (no atomics, so the result does
// not depend on scheduling), summed per column by a second kernel.
#include <algorithm>
#include <cstdint>
#include <string>

#include <cuda_runtime.h>

#include "kernels/fused_kernels.h"
#include "kernels/kernel_support.cuh"

namespace nss::kernels {
namespace {

constexpr int kMaxRowThreads = 512;
constexpr int kSumCols = 32;  // partial_sum_kernel block: 32 columns x 8 parts
constexpr int kSumParts = 8;

template <typename T, int V>
__global__ void __launch_bounds__(kMaxRowThreads)
    rms_norm_forward_kernel(const T* __restrict__ x, const T* __restrict__ weight,
                            std::int64_t rows, std::int64_t cols, float eps, T* __restrict__ out,
                            float* __restrict__ rstd_out) {
  const std::int64_t packs = cols / V;
  for (std::int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * cols;
    float squares = 0.0f;
    for (std::int64_t p = threadIdx.x; p < packs; p += blockDim.x) {
      const Pack<T, V> xv = load<T, V>(xr + p * V);
#pragma unroll
      for (int j = 0; j < V; ++j) {
        const float f = to_float(xv.v[j]);
        squares += f * f;
      }
    }
    squares = block_sum(squares);
    // libtorch: mean = sum / cols, then rsqrt(variance + eps) (1 / sqrt on the CPU).
    const float rstd = 1.0f / sqrtf(squares / static_cast<float>(cols) + eps);
    if (threadIdx.x == 0) rstd_out[row] = rstd;
    T* outr = out + row * cols;
    for (std::int64_t p = threadIdx.x; p < packs; p += blockDim.x) {
      const Pack<T, V> xv = load<T, V>(xr + p * V);
      const Pack<T, V> wv = load<T, V>(weight + p * V);
      Pack<T, V> o;
#pragma unroll
      for (int j = 0; j < V; ++j) {
        const float normed = round_to<T>(to_float(xv.v[j]) * rstd);  // .to(x.dtype)
        o.v[j] = from_float<T>(to_float(wv.v[j]) * normed);
      }
      store<T, V>(outr + p * V, o);
    }
  }
}

// grad_x = rstd * dn - x * rstd^3 * sum(dn * x) / cols with dn = grad_out *
// weight in T (autograd of rms_norm, the last two factors folded). Block b's
// partial row (partial + b * cols, when partial is set) receives the sum over
// its rows of grad_out * normed; the grid is at most rows blocks, so every
// block has a first row, which writes the partial row rather than adding to it.
template <typename T, int V>
__global__ void __launch_bounds__(kMaxRowThreads)
    rms_norm_backward_kernel(const T* __restrict__ grad_out, const T* __restrict__ x,
                             const T* __restrict__ weight, const float* __restrict__ rstd,
                             std::int64_t rows, std::int64_t cols, T* __restrict__ grad_x,
                             float* __restrict__ partial) {
  const std::int64_t packs = cols / V;
  float* const own_partial = partial != nullptr ? partial + blockIdx.x * cols : nullptr;
  for (std::int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const bool first = row == static_cast<std::int64_t>(blockIdx.x);
    const T* gr = grad_out + row * cols;
    const T* xr = x + row * cols;
    const float r = rstd[row];
    float dot = 0.0f;
    for (std::int64_t p = threadIdx.x; p < packs; p += blockDim.x) {
      const Pack<T, V> gv = load<T, V>(gr + p * V);
      const Pack<T, V> xv = load<T, V>(xr + p * V);
      const Pack<T, V> wv = load<T, V>(weight + p * V);
#pragma unroll
      for (int j = 0; j < V; ++j)
        dot += round_to<T>(to_float(gv.v[j]) * to_float(wv.v[j])) * to_float(xv.v[j]);
    }
    dot = block_sum(dot);
    const float coef = r * r * r * dot / static_cast<float>(cols);
    T* gxr = grad_x + row * cols;
    for (std::int64_t p = threadIdx.x; p < packs; p += blockDim.x) {
      const Pack<T, V> gv = load<T, V>(gr + p * V);
      const Pack<T, V> xv = load<T, V>(xr + p * V);
      const Pack<T, V> wv = load<T, V>(weight + p * V);
      Pack<T, V> o;
#pragma unroll
      for (int j = 0; j < V; ++j) {
        const float dn = round_to<T>(to_float(gv.v[j]) * to_float(wv.v[j]));
        o.v[j] = from_float<T>(r * dn - to_float(xv.v[j]) * coef);
      }
      store<T, V>(gxr + p * V, o);
      if (own_partial != nullptr) {
        Pack<float, V> acc;
        if (!first) acc = load<float, V>(own_partial + p * V);
#pragma unroll
        for (int j = 0; j < V; ++j) {
          const float normed = round_to<T>(to_float(xv.v[j]) * r);
          const float term = to_float(gv.v[j]) * normed;
          acc.v[j] = first ? term : acc.v[j] + term;
        }
        store<float, V>(own_partial + p * V, acc);
      }
    }
  }
}

// out[c] = sum over p < parts of partial[p * cols + c], in fp32, rounded to T.
template <typename T>
__global__ void __launch_bounds__(kSumCols* kSumParts)
    partial_sum_kernel(const float* __restrict__ partial, std::int64_t parts, std::int64_t cols,
                       T* __restrict__ out) {
  __shared__ float sums[kSumParts][kSumCols + 1];
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * kSumCols + threadIdx.x;
  float s = 0.0f;
  if (c < cols)
    for (std::int64_t p = threadIdx.y; p < parts; p += kSumParts) s += partial[p * cols + c];
  sums[threadIdx.y][threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.y == 0 && c < cols) {
    float total = 0.0f;
#pragma unroll
    for (int y = 0; y < kSumParts; ++y) total += sums[y][threadIdx.x];
    out[c] = from_float<T>(total);
  }
}

// --- Host side -----------------------------------------------------------------

// Threads of a row block: a multiple of 32 covering the row's packs, at most kMaxRowThreads.
unsigned row_threads(std::int64_t packs) {
  return static_cast<unsigned>(
      std::clamp<std::int64_t>((packs + 31) / 32 * 32, 32, kMaxRowThreads));
}

template <typename T>
void launch_rms_norm_forward(const void* x, const void* weight, std::int64_t rows,
                             std::int64_t cols, float eps, void* out, float* rstd, void* stream) {
  constexpr int V = kVec<T>;
  const auto* xt = static_cast<const T*>(x);
  const auto* wt = static_cast<const T*>(weight);
  auto* ot = static_cast<T*>(out);
  const bool packed = cols % V == 0 && aligned16(x) && aligned16(weight) && aligned16(out);
  const unsigned grid = grid_for(rows);
  if (packed)
    rms_norm_forward_kernel<T, V>
        <<<grid, row_threads(cols / V), 0, as_stream(stream)>>>(xt, wt, rows, cols, eps, ot, rstd);
  else
    rms_norm_forward_kernel<T, 1>
        <<<grid, row_threads(cols), 0, as_stream(stream)>>>(xt, wt, rows, cols, eps, ot, rstd);
  check_launch("RMSNorm forward");
}

template <typename T>
void launch_rms_norm_backward(const void* grad_out, const void* x, const void* weight,
                              const float* rstd, std::int64_t rows, std::int64_t cols, void* grad_x,
                              void* grad_weight, float* scratch, void* stream) {
  constexpr int V = kVec<T>;
  const auto* gt = static_cast<const T*>(grad_out);
  const auto* xt = static_cast<const T*>(x);
  const auto* wt = static_cast<const T*>(weight);
  auto* gxt = static_cast<T*>(grad_x);
  float* partial = grad_weight != nullptr ? scratch : nullptr;
  const bool packed = cols % V == 0 && aligned16(grad_out) && aligned16(x) && aligned16(weight) &&
                      aligned16(grad_x) && (partial == nullptr || aligned16(partial));
  // The partial rows number the grid's blocks: rms_norm_backward_scratch(rows, cols) / cols.
  const std::int64_t parts = std::min(rows, kRmsNormPartialRows);
  const unsigned grid = static_cast<unsigned>(parts);
  if (packed)
    rms_norm_backward_kernel<T, V><<<grid, row_threads(cols / V), 0, as_stream(stream)>>>(
        gt, xt, wt, rstd, rows, cols, gxt, partial);
  else
    rms_norm_backward_kernel<T, 1><<<grid, row_threads(cols), 0, as_stream(stream)>>>(
        gt, xt, wt, rstd, rows, cols, gxt, partial);
  check_launch("RMSNorm backward");
  if (partial == nullptr) return;
  const dim3 block(kSumCols, kSumParts);
  const auto sum_grid = static_cast<unsigned>((cols + kSumCols - 1) / kSumCols);
  partial_sum_kernel<T><<<sum_grid, block, 0, as_stream(stream)>>>(partial, parts, cols,
                                                                   static_cast<T*>(grad_weight));
  check_launch("RMSNorm grad_weight sum");
}

}  // namespace

bool fused_kernels_compiled() {
  return true;
}

void rms_norm_forward(const void* x, const void* weight, std::int64_t rows, std::int64_t cols,
                      float eps, void* out, float* rstd, Dtype dtype, void* stream) {
  require(rows >= 0 && cols > 0, "rms_norm_forward",
          "bad shape [" + std::to_string(rows) + ", " + std::to_string(cols) + "]");
  if (rows == 0) return;
  if (dtype == Dtype::kFloat32)
    launch_rms_norm_forward<float>(x, weight, rows, cols, eps, out, rstd, stream);
  else
    launch_rms_norm_forward<std::uint16_t>(x, weight, rows, cols, eps, out, rstd, stream);
}

void rms_norm_backward(const void* grad_out, const void* x, const void* weight, const float* rstd,
                       std::int64_t rows, std::int64_t cols, void* grad_x, void* grad_weight,
                       float* scratch, Dtype dtype, void* stream) {
  require(rows >= 0 && cols > 0, "rms_norm_backward",
          "bad shape [" + std::to_string(rows) + ", " + std::to_string(cols) + "]");
  if (rows == 0) {
    // No rows: grad_weight is a sum of nothing.
    if (grad_weight != nullptr)
      check_cuda(
          cudaMemsetAsync(grad_weight, 0,
                          static_cast<std::size_t>(cols) * (dtype == Dtype::kFloat32 ? 4 : 2),
                          as_stream(stream)),
          "zeroing grad_weight");
    return;
  }
  require(grad_weight == nullptr || scratch != nullptr, "rms_norm_backward",
          "grad_weight needs scratch of rms_norm_backward_scratch(rows, cols) floats");
  if (dtype == Dtype::kFloat32)
    launch_rms_norm_backward<float>(grad_out, x, weight, rstd, rows, cols, grad_x, grad_weight,
                                    scratch, stream);
  else
    launch_rms_norm_backward<std::uint16_t>(grad_out, x, weight, rstd, rows, cols, grad_x,
                                            grad_weight, scratch, stream);
}

}  // namespace nss::kernels

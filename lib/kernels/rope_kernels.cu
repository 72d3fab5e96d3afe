// RoPE kernels of fused_kernels.h (helpers in kernel_support.cuh): one thread
// per pair of packs (x[j], x[j + half]) of a row.
#include <algorithm>
#include <cstdint>
#include <string>

#include <cuda_runtime.h>

#include "kernels/fused_kernels.h"
#include "kernels/kernel_support.cuh"

namespace nss::kernels {
namespace {

// Forward, per row of head_dim with half = head_dim / 2, lo = [0, half), hi = [half, head_dim):
//   out_lo = x_lo * cos_lo - x_hi * sin_lo,   out_hi = x_hi * cos_hi + x_lo * sin_hi;
// backward (autograd of x * cos + rotate_half(x) * sin):
//   gx_lo = g_lo * cos_lo + g_hi * sin_hi,    gx_hi = g_hi * cos_hi - g_lo * sin_lo.
// cos and sin are rounded to T first, each product and the sum are rounded to
// T, and __fmul_rn/__fadd_rn keep the fp32 case free of FMA contraction.
template <typename T, int V, bool kBackward>
__global__ void __launch_bounds__(kThreads)
    rope_kernel(const T* __restrict__ in, RopeStrides in_strides,
                const std::int64_t* __restrict__ positions, const float* __restrict__ cos,
                const float* __restrict__ sin, std::int64_t table_rows, RopeShape shape,
                T* __restrict__ out, RopeStrides out_strides) {
  const std::int64_t half = shape.head_dim / 2;
  const std::int64_t packs = half / V;
  const std::int64_t rows = shape.batch * shape.heads * shape.seq;
  const std::int64_t row_stride = static_cast<std::int64_t>(gridDim.x) * blockDim.y;
  for (std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * blockDim.y + threadIdx.y;
       row < rows; row += row_stride) {
    const std::int64_t s = row % shape.seq;
    const std::int64_t bh = row / shape.seq;
    const std::int64_t h = bh % shape.heads, b = bh / shape.heads;
    const std::int64_t position = positions != nullptr ? positions[b * shape.seq + s] : s;
    const bool valid = position >= 0 && position < table_rows;
    const float* cos_row = cos + (valid ? position : 0) * shape.head_dim;
    const float* sin_row = sin + (valid ? position : 0) * shape.head_dim;
    const T* src = in + b * in_strides.batch + h * in_strides.head + s * in_strides.seq;
    T* dst = out + b * out_strides.batch + h * out_strides.head + s * out_strides.seq;
    for (std::int64_t p = threadIdx.x; p < packs; p += blockDim.x) {
      const std::int64_t j = p * V;
      const Pack<T, V> lo = load<T, V>(src + j);
      const Pack<T, V> hi = load<T, V>(src + half + j);
      const Pack<float, V> cos_lo = load<float, V>(cos_row + j);
      const Pack<float, V> cos_hi = load<float, V>(cos_row + half + j);
      const Pack<float, V> sin_lo = load<float, V>(sin_row + j);
      const Pack<float, V> sin_hi = load<float, V>(sin_row + half + j);
      Pack<T, V> out_lo, out_hi;
#pragma unroll
      for (int k = 0; k < V; ++k) {
        const float a = to_float(lo.v[k]), z = to_float(hi.v[k]);
        const float c_lo = round_to<T>(cos_lo.v[k]), c_hi = round_to<T>(cos_hi.v[k]);
        const float s_lo = round_to<T>(sin_lo.v[k]), s_hi = round_to<T>(sin_hi.v[k]);
        float r_lo, r_hi;
        if (kBackward) {
          r_lo = __fadd_rn(round_to<T>(__fmul_rn(a, c_lo)), round_to<T>(__fmul_rn(z, s_hi)));
          r_hi = __fadd_rn(round_to<T>(__fmul_rn(z, c_hi)), -round_to<T>(__fmul_rn(a, s_lo)));
        } else {
          r_lo = __fadd_rn(round_to<T>(__fmul_rn(a, c_lo)), round_to<T>(__fmul_rn(-z, s_lo)));
          r_hi = __fadd_rn(round_to<T>(__fmul_rn(z, c_hi)), round_to<T>(__fmul_rn(a, s_hi)));
        }
        if (!valid) r_lo = r_hi = __int_as_float(0x7fc00000);
        out_lo.v[k] = from_float<T>(r_lo);
        out_hi.v[k] = from_float<T>(r_hi);
      }
      store<T, V>(dst + j, out_lo);
      store<T, V>(dst + half + j, out_hi);
    }
  }
}

// --- Host side -----------------------------------------------------------------

bool strides_divisible(const RopeStrides& s, std::int64_t v) {
  return s.batch % v == 0 && s.head % v == 0 && s.seq % v == 0;
}

template <typename T, bool kBackward>
void launch_rope(const void* in, RopeStrides in_strides, const std::int64_t* positions,
                 const float* cos, const float* sin, std::int64_t table_rows,
                 const RopeShape& shape, void* out, RopeStrides out_strides, void* stream) {
  constexpr int V = kVec<T>;
  const std::int64_t half = shape.head_dim / 2;
  const bool packed = half % V == 0 && strides_divisible(in_strides, V) &&
                      strides_divisible(out_strides, V) && aligned16(in) && aligned16(out) &&
                      aligned16(cos) && aligned16(sin);
  const std::int64_t packs = packed ? half / V : half;
  const auto tx = static_cast<unsigned>(std::min<std::int64_t>(packs, kThreads));
  const unsigned ty = std::max(1u, kThreads / tx);
  const std::int64_t rows = shape.batch * shape.heads * shape.seq;
  const unsigned grid = grid_for((rows + ty - 1) / ty);
  const dim3 block(tx, ty);
  const auto* it = static_cast<const T*>(in);
  auto* ot = static_cast<T*>(out);
  if (packed)
    rope_kernel<T, V, kBackward><<<grid, block, 0, as_stream(stream)>>>(
        it, in_strides, positions, cos, sin, table_rows, shape, ot, out_strides);
  else
    rope_kernel<T, 1, kBackward><<<grid, block, 0, as_stream(stream)>>>(
        it, in_strides, positions, cos, sin, table_rows, shape, ot, out_strides);
  check_launch(kBackward ? "RoPE backward" : "RoPE forward");
}

void check_rope(const RopeShape& shape, const float* cos, const float* sin, std::int64_t table_rows,
                const char* function) {
  require(shape.batch >= 0 && shape.heads >= 0 && shape.seq >= 0, function, "negative shape");
  require(shape.head_dim > 0 && shape.head_dim % 2 == 0, function,
          "head_dim must be even and positive, not " + std::to_string(shape.head_dim));
  require(cos != nullptr && sin != nullptr && table_rows > 0, function, "empty cos/sin tables");
}

}  // namespace

void rope_forward(const void* x, RopeStrides x_strides, const std::int64_t* positions,
                  const float* cos, const float* sin, std::int64_t table_rows, RopeShape shape,
                  void* out, RopeStrides out_strides, Dtype dtype, void* stream) {
  check_rope(shape, cos, sin, table_rows, "rope_forward");
  if (shape.batch * shape.heads * shape.seq == 0) return;
  if (dtype == Dtype::kFloat32)
    launch_rope<float, false>(x, x_strides, positions, cos, sin, table_rows, shape, out,
                              out_strides, stream);
  else
    launch_rope<std::uint16_t, false>(x, x_strides, positions, cos, sin, table_rows, shape, out,
                                      out_strides, stream);
}

void rope_backward(const void* grad_out, RopeStrides grad_out_strides,
                   const std::int64_t* positions, const float* cos, const float* sin,
                   std::int64_t table_rows, RopeShape shape, void* grad_x,
                   RopeStrides grad_x_strides, Dtype dtype, void* stream) {
  check_rope(shape, cos, sin, table_rows, "rope_backward");
  if (shape.batch * shape.heads * shape.seq == 0) return;
  if (dtype == Dtype::kFloat32)
    launch_rope<float, true>(grad_out, grad_out_strides, positions, cos, sin, table_rows, shape,
                             grad_x, grad_x_strides, stream);
  else
    launch_rope<std::uint16_t, true>(grad_out, grad_out_strides, positions, cos, sin, table_rows,
                                     shape, grad_x, grad_x_strides, stream);
}

}  // namespace nss::kernels

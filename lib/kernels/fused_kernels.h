// Fused RMSNorm, RoPE and SwiGLU on a CUDA device, forward and backward: the
// kernels of rms_norm_kernels.cu, rope_kernels.cu and swiglu_kernels.cu,
// computing what lib/model's libtorch ops compute
// (rms_norm, RotaryEmbedding::apply, silu(gate) * up) in one pass each, with
// fp32 arithmetic inside and the roundings to the tensor dtype where libtorch
// rounds. No libtorch here: model/fused_ops.h wraps them as autograd ops.
// Without the CUDA toolkit the build links fused_kernels_no_cuda.cpp instead,
// whose functions throw.
//
// Pointers are device pointers to fp32 or bf16 (raw bits, std::uint16_t) data
// as `dtype` says; row-major, contiguous unless strides are passed. `stream` is
// a cudaStream_t (nullptr: the legacy default stream). The launches are
// asynchronous; a failed launch throws nss::InternalError with the CUDA error.
#pragma once

#include <algorithm>
#include <cstdint>

namespace nss::kernels {

enum class Dtype { kFloat32, kBFloat16 };

/// True when the kernels were compiled (a build with the CUDA toolkit).
bool fused_kernels_compiled();

// --- RMSNorm: out = weight * (x * rsqrt(mean(x^2) + eps)).to(dtype) ----------

/// x, out [rows, cols], weight [cols], all `dtype`; rstd [rows] fp32 receives
/// rsqrt(mean(x^2) + eps) for the backward pass.
void rms_norm_forward(const void* x, const void* weight, std::int64_t rows, std::int64_t cols,
                      float eps, void* out, float* rstd, Dtype dtype, void* stream);

/// Most row-blocks of the RMSNorm backward: each keeps fp32 partial sums of
/// grad_weight in the scratch buffer, reduced by a second kernel.
constexpr std::int64_t kRmsNormPartialRows = 512;

/// fp32 scratch elements rms_norm_backward needs when it computes grad_weight.
inline std::int64_t rms_norm_backward_scratch(std::int64_t rows, std::int64_t cols) {
  return std::min(rows, kRmsNormPartialRows) * cols;
}

/// Gradients of rms_norm_forward for grad_out [rows, cols]: grad_x [rows, cols]
/// and, unless grad_weight is nullptr, grad_weight [cols] (fp32 sums over rows,
/// then rounded to `dtype`) through `scratch` of rms_norm_backward_scratch(rows,
/// cols) floats; `rstd` is the forward pass's.
void rms_norm_backward(const void* grad_out, const void* x, const void* weight, const float* rstd,
                       std::int64_t rows, std::int64_t cols, void* grad_x, void* grad_weight,
                       float* scratch, Dtype dtype, void* stream);

// --- RoPE (rotate_half convention) ---------------------------------------------

/// [batch, heads, seq, head_dim]; head_dim even.
struct RopeShape {
  std::int64_t batch = 0, heads = 0, seq = 0, head_dim = 0;
};

/// Element strides of the batch, head and seq dimensions; head_dim's is 1.
/// For the [B, S, H, D] buffer that q/k are transposed views of:
/// {S * H * D, D, H * D}.
struct RopeStrides {
  std::int64_t batch = 0, head = 0, seq = 0;
};

/// out = x * cos[p] + rotate_half(x) * sin[p] with the fp32 tables (cos, sin:
/// [table_rows, head_dim]) rounded to `dtype` first, as RotaryEmbedding::apply
/// does; p = positions[b * seq + s] (int64 [batch, seq]), or s when positions
/// is nullptr. A position outside [0, table_rows) gives NaN in its row.
/// x and out must not overlap.
void rope_forward(const void* x, RopeStrides x_strides, const std::int64_t* positions,
                  const float* cos, const float* sin, std::int64_t table_rows, RopeShape shape,
                  void* out, RopeStrides out_strides, Dtype dtype, void* stream);

/// Gradient of rope_forward (the rotation by the negative angle):
/// grad_x = grad_out * cos - rotate_half(grad_out * sin), with the same roundings
/// as libtorch's autograd of apply().
void rope_backward(const void* grad_out, RopeStrides grad_out_strides,
                   const std::int64_t* positions, const float* cos, const float* sin,
                   std::int64_t table_rows, RopeShape shape, void* grad_x,
                   RopeStrides grad_x_strides, Dtype dtype, void* stream);

// --- SwiGLU: out = silu(gate) * up ---------------------------------------------

/// gate, up, out: n elements of `dtype`.
void swiglu_forward(const void* gate, const void* up, std::int64_t n, void* out, Dtype dtype,
                    void* stream);

/// grad_gate = silu'(gate) * (grad_out * up), grad_up = grad_out * silu(gate).
void swiglu_backward(const void* grad_out, const void* gate, const void* up, std::int64_t n,
                     void* grad_gate, void* grad_up, Dtype dtype, void* stream);

}  // namespace nss::kernels

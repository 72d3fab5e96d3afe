// RMSNorm, RoPE and SwiGLU as fused autograd ops on CUDA tensors: the kernels
// of kernels/fused_kernels.h, launched on the current CUDA stream, giving what
// rms_norm (llama_functional.h), RotaryEmbedding::apply and silu(gate) * up
// give up to the order of fp32 sums. Only a build with a CUDA libtorch and the
// CUDA toolkit runs them; elsewhere they throw nss::InternalError.
#pragma once

#include <torch/types.h>

namespace nss::model {

/// True when the fused ops apply to `x`: kernels compiled, a CUDA libtorch, x
/// on a CUDA device in fp32 or bf16, and NSS_FUSED_KERNELS not 0 in the
/// environment (on by default).
bool fused_kernels_enabled(const torch::Tensor& x);

/// rms_norm(x, weight, eps) for x [..., cols] and weight [cols] of x's dtype.
torch::Tensor fused_rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps);

/// RotaryEmbedding::apply(x, positions) with that embedding's fp32 tables
/// cos/sin [max_positions, head_dim] (rope.cos(), rope.sin()): x [B, heads, S,
/// head_dim], any strides (copied only when head_dim's stride is not 1; the
/// result has x's strides where empty_like keeps them); positions int64 [B, S],
/// or undefined for 0..S-1. A position past the tables gives NaN rows.
torch::Tensor fused_rope(const torch::Tensor& x, const torch::Tensor& positions,
                         const torch::Tensor& cos, const torch::Tensor& sin);

/// torch::silu(gate) * up for gate and up of one shape and dtype.
torch::Tensor fused_swiglu(const torch::Tensor& gate, const torch::Tensor& up);

}  // namespace nss::model

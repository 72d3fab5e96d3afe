// Shared by the fused-kernel tests (fused_kernels_test.cpp, fused_ops_test.cpp):
// the libtorch CPU ops of lib/model that the kernels must reproduce, random
// inputs, and the tolerance check (fp32 to 1e-5, bf16 to a couple of ulps).
#pragma once

#include <cstdint>
#include <string>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "config/config.h"
#include "model/rotary_embedding.h"

namespace nss::kernels::testing {

inline constexpr double kEps = 1e-5;
inline constexpr torch::ScalarType kDtypes[] = {torch::kFloat32, torch::kBFloat16};

// --- References: the ops of lib/model, on the CPU ------------------------------

/// llama_functional.cpp's rms_norm.
inline torch::Tensor reference_rms_norm(const torch::Tensor& x, const torch::Tensor& weight,
                                        double eps) {
  const torch::Tensor x32 = x.to(torch::kFloat32);
  const torch::Tensor variance = x32.pow(2).mean(-1, /*keepdim=*/true);
  return weight * (x32 * torch::rsqrt(variance + eps)).to(x.scalar_type());
}

/// The model's SwiGLU: silu(gate) * up.
inline torch::Tensor reference_swiglu(const torch::Tensor& gate, const torch::Tensor& up) {
  return torch::silu(gate) * up;
}

/// The model's rotary tables (theta 500000) on the CPU.
inline model::RotaryEmbedding rotary(std::int64_t head_dim, std::int64_t max_positions) {
  config::ModelConfig m;
  m.head_dim = head_dim;
  m.rope_theta = 500000.0;
  return model::RotaryEmbedding(m, max_positions, torch::kCPU);
}

/// Packed rows: row 0 holds documents of 20 and seq - 20 tokens, row 1 one
/// document starting at position 5 (a continued one), so positions restart mid-row.
inline torch::Tensor packed_positions(std::int64_t seq) {
  torch::Tensor p = torch::empty({2, seq}, torch::kInt64);
  auto a = p.accessor<std::int64_t, 2>();
  for (std::int64_t s = 0; s < seq; ++s) {
    a[0][s] = s < 20 ? s : s - 20;
    a[1][s] = s + 5;
  }
  return p;
}

/// Standard normal values times `scale`, drawn in fp32 and rounded to `dtype`.
inline torch::Tensor random(torch::IntArrayRef shape, torch::ScalarType dtype, double scale = 1.0) {
  return (torch::randn(shape, torch::kFloat32) * scale).to(dtype);
}

/// "fp32" or "bf16", for test traces.
inline std::string name(torch::ScalarType dtype) {
  return dtype == torch::kFloat32 ? "fp32" : "bf16";
}

/// |got - want| <= rtol |want| + atol max|want|: fp32 1e-5 relative, bf16 two
/// ulps (2^-7 relative each), with the absolute term for values near zero
/// after cancellation. NaNs fail.
inline void expect_close(const torch::Tensor& got, const torch::Tensor& want,
                         const std::string& what) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  const bool bf16 = want.scalar_type() == torch::kBFloat16;
  const double rtol = bf16 ? 2e-2 : 1e-5, atol = bf16 ? 1e-2 : 1e-5;
  const torch::Tensor g = got.to(torch::kFloat64).contiguous().view(-1);
  const torch::Tensor w = want.to(torch::kFloat64).contiguous().view(-1);
  if (w.numel() == 0) return;
  const double scale = w.abs().max().item<double>();
  const torch::Tensor bound = w.abs() * rtol + atol * scale;
  const torch::Tensor bad = ((g - w).abs() <= bound).logical_not();
  const std::int64_t failures = bad.sum().item<std::int64_t>();
  if (failures == 0) return;
  const std::int64_t first = bad.nonzero().view(-1)[0].item<std::int64_t>();
  ADD_FAILURE() << what << ": " << failures << " of " << w.numel() << " elements differ; first ["
                << first << "] " << g[first].item<double>() << " vs " << w[first].item<double>()
                << " (scale " << scale << ")";
}

}  // namespace nss::kernels::testing

#include "model/rotary_embedding.h"

#include <cmath>

#include <torch/torch.h>

#include "core/error.h"
#include "model/fused_ops.h"

namespace nss::model {
namespace {

// transformers' _compute_llama3_parameters, op for op in float32. Python's
// `scalar / tensor` is `tensor.reciprocal() * scalar`, so it is spelled that way.
torch::Tensor llama3_scaled(const torch::Tensor& inv_freq, const config::RopeScalingConfig& rope) {
  const double factor = rope.factor;
  const double old_context = static_cast<double>(rope.original_max_position_embeddings);
  const double low_freq_wavelen = old_context / rope.low_freq_factor;
  const double high_freq_wavelen = old_context / rope.high_freq_factor;
  const torch::Tensor wavelen = inv_freq.reciprocal() * (2 * M_PI);
  torch::Tensor scaled = torch::where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq);
  const torch::Tensor smooth = (wavelen.reciprocal() * old_context - rope.low_freq_factor) /
                               (rope.high_freq_factor - rope.low_freq_factor);
  const torch::Tensor smoothed = (1 - smooth) * scaled / factor + smooth * scaled;
  const torch::Tensor medium =
      (wavelen >= high_freq_wavelen).logical_and(wavelen <= low_freq_wavelen);
  return torch::where(medium, smoothed, scaled);
}

torch::Tensor rotate_half(const torch::Tensor& x) {
  const std::int64_t half = x.size(-1) / 2;
  return torch::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
}

}  // namespace

torch::Tensor rope_inverse_frequencies(const config::ModelConfig& model) {
  return rope_inverse_frequencies(model, {model.rope_theta, true});
}

torch::Tensor rope_inverse_frequencies(const config::ModelConfig& model, const RopeBase& base) {
  const std::int64_t dim = model.head_dim;
  const torch::Tensor exponents =
      torch::arange(0, dim, 2, torch::kInt64).to(torch::kFloat32) / static_cast<double>(dim);
  // HF: 1.0 / (base ** exponents), with base ** t evaluated as tensor(base, float32) ** t.
  const torch::Tensor inv_freq =
      torch::pow(torch::scalar_tensor(base.theta, torch::kFloat32), exponents).reciprocal();
  const auto& rope = model.rope_scaling;
  if (!base.scaled) return inv_freq;
  switch (rope.type) {
    case config::RopeScaling::kLinear:
      return inv_freq / rope.factor;
    case config::RopeScaling::kLlama3:
      return llama3_scaled(inv_freq, rope);
    case config::RopeScaling::kNone:
      return inv_freq;
  }
  throw InternalError("model", "unknown rope_scaling type");
}

RotaryEmbedding::RotaryEmbedding(const config::ModelConfig& model, std::int64_t max_positions,
                                 torch::Device device)
    : RotaryEmbedding(model, max_positions, device, {model.rope_theta, true}) {}

RotaryEmbedding::RotaryEmbedding(const config::ModelConfig& model, std::int64_t max_positions,
                                 torch::Device device, const RopeBase& base) {
  torch::NoGradGuard no_grad;
  const torch::Tensor positions = torch::arange(max_positions, torch::kInt64).to(torch::kFloat32);
  const torch::Tensor angles = torch::outer(positions, rope_inverse_frequencies(model, base));
  const torch::Tensor doubled = torch::cat({angles, angles}, -1);
  cos_ = doubled.cos().to(device);
  sin_ = doubled.sin().to(device);
}

torch::Tensor RotaryEmbedding::apply(const torch::Tensor& x) const {
  const std::int64_t seq = x.size(-2);
  NSS_ASSERT(seq <= max_positions(), "model",
             "sequence of " + std::to_string(seq) + " exceeds the rotary table of " +
                 std::to_string(max_positions()) + " positions");
  if (fused_kernels_enabled(x)) return fused_rope(x, torch::Tensor(), cos_, sin_);
  const torch::Tensor cos = cos_.narrow(0, 0, seq).to(x.scalar_type());
  const torch::Tensor sin = sin_.narrow(0, 0, seq).to(x.scalar_type());
  return x * cos + rotate_half(x) * sin;
}

torch::Tensor RotaryEmbedding::apply(const torch::Tensor& x, const torch::Tensor& positions) const {
  if (fused_kernels_enabled(x)) return fused_rope(x, positions, cos_, sin_);
  // [B, S] positions pick [B, 1, S, head_dim] rows of the tables.
  const torch::Tensor cos = cos_.index({positions}).unsqueeze(1).to(x.scalar_type());
  const torch::Tensor sin = sin_.index({positions}).unsqueeze(1).to(x.scalar_type());
  return x * cos + rotate_half(x) * sin;
}

}  // namespace nss::model

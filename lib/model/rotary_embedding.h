// Rotary position embeddings exactly as Hugging Face Llama computes them:
// inv_freq = 1 / rope_theta^(2i / head_dim) in float32, adjusted by
// rope_scaling ("linear": divided by factor; "llama3": the piecewise
// wavelength rule of Llama 3.1), angles = position x inv_freq in float32,
// cos/sin of [angles, angles], applied in the "rotate_half" convention.
#pragma once

#include <torch/types.h>

#include "config/config.h"

namespace nss::model {

/// A layer's RoPE base and whether model.rope_scaling applies to it
/// (Gemma 3's local layers: their own base, unscaled).
struct RopeBase {
  double theta = 0;
  bool scaled = true;
};

/// HF's inv_freq for `model` (float32, [head_dim / 2]), on the CPU: at
/// model.rope_theta, scaled by model.rope_scaling, or at `base`.
torch::Tensor rope_inverse_frequencies(const config::ModelConfig& model);
torch::Tensor rope_inverse_frequencies(const config::ModelConfig& model, const RopeBase& base);

class RotaryEmbedding {
 public:
  /// cos/sin tables for positions [0, max_positions) on `device`, float32.
  RotaryEmbedding(const config::ModelConfig& model, std::int64_t max_positions,
                  torch::Device device);
  /// The same at `base`.
  RotaryEmbedding(const config::ModelConfig& model, std::int64_t max_positions,
                  torch::Device device, const RopeBase& base);

  /// Applies the rotation to q [B, heads, S, head_dim] or k in their dtype,
  /// for positions 0..S-1.
  torch::Tensor apply(const torch::Tensor& x) const;
  /// The same for the positions of each token, int64 [B, S] (packed rows:
  /// they restart at 0 in every document).
  torch::Tensor apply(const torch::Tensor& x, const torch::Tensor& positions) const;

  /// The float32 cos and sin tables, [max_positions, head_dim].
  const torch::Tensor& cos() const { return cos_; }
  const torch::Tensor& sin() const { return sin_; }
  std::int64_t max_positions() const { return cos_.size(0); }

 private:
  torch::Tensor cos_, sin_;
};

}  // namespace nss::model

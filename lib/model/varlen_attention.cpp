#include "model/varlen_attention.h"

#include <torch/torch.h>

#include "core/error.h"
#include "plan/run_plan.h"

// NSS_HAVE_VARLEN_ATTENTION (lib/build_options.cmake): the signatures below
// are libtorch 2.11's; other releases keep the mask path.

namespace nss::model {

bool varlen_attention_applies(const torch::Tensor& q) {
  const auto dtype = q.scalar_type();
  const std::int64_t head_dim = q.size(-1);
  const bool flash =
      (dtype == torch::kBFloat16 || dtype == torch::kHalf) && head_dim % 8 == 0 && head_dim <= 256;
  return plan::varlen_attention_built() && q.is_cuda() && (flash || dtype == torch::kFloat32);
}

torch::Tensor varlen_attention(const torch::Tensor& q, const torch::Tensor& k,
                               const torch::Tensor& v, const torch::Tensor& cumulative_lengths,
                               std::int64_t longest) {
#if NSS_HAVE_VARLEN_ATTENTION
  const std::int64_t b = q.size(0), heads = q.size(1), s = q.size(2), d = q.size(3);
  // [B, heads, S, d] -> the tokens of every row in order: [B * S, heads, d].
  const auto tokens = [&](const torch::Tensor& t) {
    return t.transpose(1, 2).reshape({b * s, heads, d});
  };
  torch::Tensor out;
  if (q.scalar_type() == torch::kFloat32) {
    // One batch of B * S tokens; mask type 1 is causal from the top left.
    constexpr std::int64_t kCausalFromTopLeft = 1;
    const auto batch = [&](const torch::Tensor& t) { return tokens(t).unsqueeze(0); };
    out = std::get<0>(at::_efficient_attention_forward(
        batch(q), batch(k), batch(v), /*bias=*/std::nullopt, cumulative_lengths, cumulative_lengths,
        longest, longest, /*dropout_p=*/0.0, kCausalFromTopLeft,
        /*compute_log_sumexp=*/torch::GradMode::is_enabled()));
    out = out.squeeze(0);
  } else {
    out = std::get<0>(at::_flash_attention_forward(
        tokens(q), tokens(k), tokens(v), cumulative_lengths, cumulative_lengths, longest, longest,
        /*dropout_p=*/0.0, /*is_causal=*/true, /*return_debug_mask=*/false));
  }
  return out.view({b, s, heads, d}).transpose(1, 2);
#else
  (void)q, (void)k, (void)v, (void)cumulative_lengths, (void)longest;
  throw InternalError("model", "variable-length attention is not compiled into this build");
#endif
}

}  // namespace nss::model

#include "model/forward_support.h"

#include <cmath>
#include <string>
#include <vector>

#include "arch/architecture.h"
#include "core/error.h"

namespace nss::model {

void require_forward_support(const config::ModelConfig& model) {
  const arch::Architecture a = arch::describe(model);
  const arch::Family& family = *a.family;
  std::vector<std::string> missing;
  // Per-head norms with a plain weight (Qwen3); Gemma's (1 + weight) ones need the norm scale.
  if (family.qk_norm && family.norm_scale != arch::NormScale::kWeight)
    missing.push_back("q/k norms");
  if (family.sandwich_norms) missing.push_back("post-attention and feed-forward norms");
  if (family.norm_scale != arch::NormScale::kWeight) missing.push_back("(1 + weight) norms");
  if (family.activation != arch::Activation::kSilu) missing.push_back("the tanh-GELU gate");
  if (a.embedding_scale != 1.0) missing.push_back("the scaled embedding");
  if (std::fabs(a.query_scale * std::sqrt(static_cast<double>(model.head_dim)) - 1.0) > 1e-12)
    missing.push_back("query_pre_attn_scalar");
  for (const auto& layer : a.layers) {
    if (layer.sliding) {
      missing.push_back("sliding-window attention");
      break;
    }
  }
  for (const auto& layer : a.layers) {
    if (!layer.rope || layer.rope_theta != model.rope_theta || !layer.rope_scaled) {
      missing.push_back("per-layer RoPE (layers without it, or their own base)");
      break;
    }
  }
  if (missing.empty()) return;
  std::string list;
  for (const auto& feature : missing) list += (list.empty() ? "" : ", ") + feature;
  throw DataError("model",
                  "model family " + family.name + " (" + family.hf_architecture + ") needs " +
                      list + ", which this version's forward does not compute yet",
                  "use a model of a family whose forward is complete (docs/model.md lists them)");
}

}  // namespace nss::model

// The parameters of a model of any family (lib/arch describes a block's
// tensors): names (Hugging Face / PEFT), shapes, roles, grouped into FSDP
// units (0 = embedding, 1..L = decoder blocks, L + 1 = final norm + LM
// head). Plain C++: shapes only, no tensors.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/config.h"

namespace nss::model {

/// What a parameter is; decides its initialisation and weight decay.
enum class ParamRole { kEmbedding, kNorm, kLinear, kBias, kLoraA, kLoraB };

/// One parameter tensor.
struct ParamSpec {
  std::string name;                 // "model.layers.3.self_attn.q_proj.weight",
                                    // LoRA: "model.layers.3.self_attn.q_proj.lora_A.weight"
  std::vector<std::int64_t> shape;  // Hugging Face layout ([out, in] for linear)
  ParamRole role = ParamRole::kLinear;
  bool trainable = true;   // false for the frozen base when LoRA is enabled
  bool quantized = false;  // a frozen projection stored in NF4 (training.lora.quantize_base)

  /// Product of the shape.
  std::int64_t numel() const;
  /// A LoRA adapter matrix: always initialised, never read from a base.
  bool is_adapter() const { return role == ParamRole::kLoraA || role == ParamRole::kLoraB; }
};

/// The projections of a decoder block, in parameter order (LoRA target names).
const std::vector<std::string>& projection_names();

/// A decoder block's projection weight (q/k/v/o, gate/up/down; not an
/// adapter, not lm_head): what QLoRA stores in NF4.
bool is_projection_weight(const ParamSpec& spec);

/// Number of FSDP units: num_hidden_layers + 2.
int num_units(const config::ModelConfig& model);

/// Parameters of one unit in their fixed (flat-buffer) order. A decoder block:
/// its family's tensors in arch::describe's order (Llama: input_layernorm,
/// q/k/v/o_proj, post_attention_layernorm, gate/up/down_proj; biases after
/// their weights), each LoRA-targeted projection followed by its lora_A and
/// lora_B. The head
/// unit is model.norm plus lm_head, which is absent with tied embeddings (the
/// head then uses the embedding unit's weight). With quantize_base: nf4 the
/// seven projections' base weights (only those) are `quantized`.
std::vector<ParamSpec> unit_parameters(const config::ModelConfig& model,
                                       const config::LoraConfig& lora, int unit);

/// Every parameter, unit by unit.
std::vector<ParamSpec> all_parameters(const config::ModelConfig& model,
                                      const config::LoraConfig& lora);

/// Parameter counts (a tied embedding counts once).
struct ParameterCount {
  std::int64_t total = 0;
  std::int64_t trainable = 0;
};

/// Exact counts, summed over all_parameters().
ParameterCount count_parameters(const config::ModelConfig& model, const config::LoraConfig& lora);

/// The same counts from the closed-form shape formula, as a cross-check.
ParameterCount parameter_count_formula(const config::ModelConfig& model,
                                       const config::LoraConfig& lora);

}  // namespace nss::model

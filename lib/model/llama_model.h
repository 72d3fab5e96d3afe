// The whole, unsharded Llama model: every parameter as one tensor created
// with the given TensorOptions (meta: shapes only, nothing allocated), filled
// from InitialWeights, run through the functional units of llama_functional.h.
// Used by nss_eval, as the unsharded reference in equivalence tests, and by
// the golden tests; training uses the same units through FSDP.
#pragma once

#include <string>
#include <vector>

#include <torch/types.h>

#include "config/config.h"
#include "model/initial_weights.h"
#include "model/llama_functional.h"
#include "model/lora_dropout.h"
#include "model/param_spec.h"

namespace nss::model {

/// The values the projections' base weights take: as read, or as a QLoRA
/// run computes with them, dequant(quant(W)) of each whole tensor in NF4.
struct BaseQuantization {
  bool nf4 = false;
  bool double_quant = false;
};

/// What a training configuration's LoRA section makes of the base.
BaseQuantization base_quantization(const config::LoraConfig& lora);

class LlamaModel {
 public:
  /// Allocates every parameter, uninitialised, with `options` (dtype, device;
  /// kMeta allocates nothing). Trainable parameters require grad.
  LlamaModel(const config::ModelConfig& model, const config::LoraConfig& lora,
             torch::TensorOptions options);

  /// Fills every parameter from `weights`, in bounded float32 pieces; with
  /// `quantization.nf4` each projection weight whole, then round-tripped.
  void load(const InitialWeights& weights, const BaseQuantization& quantization = {});

  const config::ModelConfig& config() const { return model_; }
  const config::LoraConfig& lora() const { return lora_; }
  int num_units() const { return static_cast<int>(specs_.size()); }
  /// Parameter specs and tensors of a unit, in unit_parameters() order.
  const std::vector<ParamSpec>& unit_specs(int unit) const { return specs_.at(unit); }
  const std::vector<torch::Tensor>& unit_tensors(int unit) const { return tensors_.at(unit); }
  /// The parameter called `name`; InternalError when there is none.
  torch::Tensor parameter(const std::string& name) const;
  /// The weight the LM head multiplies by (the embedding when tied).
  torch::Tensor lm_head_weight() const;

  /// Logits [B, S, V] for int64 tokens [B, S], in the parameters' dtype;
  /// `documents` for packed rows (document_mask).
  torch::Tensor logits(const torch::Tensor& tokens, const DocumentMask* documents = nullptr) const;

  /// Mean next-token cross-entropy (float32 scalar) of `targets` [B, S].
  /// `dropout` (its seed, step and sample ids; the layer is set per block)
  /// enables LoRA dropout; nullptr evaluates without it.
  torch::Tensor loss(const torch::Tensor& tokens, const torch::Tensor& targets,
                     const DropoutKey* dropout = nullptr) const;
  /// sum_t weights_t * CE_t with float32 `weights` [B, S] (head_loss_forward).
  torch::Tensor weighted_loss(const torch::Tensor& tokens, const torch::Tensor& targets,
                              const torch::Tensor& weights, const DropoutKey* dropout = nullptr,
                              const DocumentMask* documents = nullptr) const;

 private:
  torch::Tensor hidden_states(const torch::Tensor& tokens, const DropoutKey* dropout,
                              const DocumentMask* documents) const;

  config::ModelConfig model_;
  config::LoraConfig lora_;
  std::vector<std::vector<ParamSpec>> specs_;
  std::vector<std::vector<torch::Tensor>> tensors_;
};

/// The model of a local Hugging Face directory (config.json defines the
/// shape; base weights from its safetensors, LoRA adapters initialised from
/// `seed`), created with `options`. DataError (exit 4) for a missing or
/// malformed directory.
LlamaModel load_pretrained_model(const std::string& dir, const config::LoraConfig& lora,
                                 torch::TensorOptions options, std::uint64_t seed = 0,
                                 const BaseQuantization& quantization = {});

}  // namespace nss::model

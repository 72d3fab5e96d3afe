// The Llama forward pass as functions of explicit parameter tensors, with
// Hugging Face LlamaForCausalLM semantics. FSDP runs each unit on views of its
// gathered flat buffer; LlamaModel runs the same functions on whole tensors.
// Parameter lists are in unit_parameters() order, in the compute dtype.
#pragma once

#include <vector>

#include <torch/types.h>

#include "config/config.h"
#include "model/lora_dropout.h"
#include "model/rotary_embedding.h"

namespace nss::model {

/// Unit 0: token ids int64 [B, S] -> hidden [B, S, H].
torch::Tensor embedding_forward(const torch::Tensor& tokens, const torch::Tensor& weight);

/// HF LlamaRMSNorm: normalised in float32, cast back, then scaled by `weight`.
torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps);

/// Units 1..L: one decoder block (pre-norm attention with grouped-query heads
/// and RoPE, pre-norm SwiGLU MLP, both residual). LoRA adapters add
/// B(A(dropout(x))) * alpha / rank to their projections; `dropout` nullptr
/// (evaluation) or lora.dropout == 0 disables dropout.
torch::Tensor decoder_block_forward(const torch::Tensor& hidden,
                                    const std::vector<torch::Tensor>& params,
                                    const config::ModelConfig& model,
                                    const config::LoraConfig& lora, const RotaryEmbedding& rope,
                                    const DropoutKey* dropout);

/// Unit L + 1 without the loss: logits [B, S, V] in the compute dtype.
torch::Tensor head_logits_forward(const torch::Tensor& hidden, const torch::Tensor& norm_weight,
                                  const torch::Tensor& lm_head_weight,
                                  const config::ModelConfig& model);

/// Unit L + 1: sum_t w_t * CE_t, the next-token cross-entropy computed in
/// float32 from the logits, weighted per token by `weights` float32 [B, S]
/// (the trainer passes mask_t / target tokens in the global batch; a weight
/// of 0 takes the token out of the loss and its gradient). targets int64
/// [B, S]. With tied embeddings `lm_head_weight` is the embedding weight.
torch::Tensor head_loss_forward(const torch::Tensor& hidden, const torch::Tensor& norm_weight,
                                const torch::Tensor& lm_head_weight, const torch::Tensor& targets,
                                const torch::Tensor& weights, const config::ModelConfig& model);

}  // namespace nss::model

// Incremental decoding of a Llama model: a prefill runs a batch of prompts
// of different lengths, left-padded to the longest, and fills a KV cache;
// each step then runs one new token per sequence against that cache, so the
// prefix is never recomputed. Each sequence sees exactly what it would see
// alone: RoPE positions start at 0 at its first real token and no query
// attends to padding. Works on any LlamaModel (nss_eval's loaders: a Hugging
// Face directory, a checkpoint step, LoRA adapters applied unmerged), in its
// dtype and on its device.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <torch/types.h>

#include "generate/kv_cache.h"
#include "model/layer_plan.h"
#include "model/llama_model.h"

namespace nss::generate {

class Decoder {
 public:
  /// Decodes with `model`, which must outlive the decoder.
  explicit Decoder(const model::LlamaModel& model);

  /// Starts a new batch: runs `prompts` (token ids, none empty) and keeps
  /// room for `max_new_tokens` more tokens per sequence. Returns the logits
  /// after each prompt's last token, float32 [prompts, vocab] on the
  /// model's device. UsageError (exit 2) for an empty prompt, a token outside
  /// the vocabulary or a longest prompt + max_new_tokens beyond
  /// max_position_embeddings.
  torch::Tensor prefill(const std::vector<std::vector<std::int64_t>>& prompts,
                        std::int64_t max_new_tokens);

  /// Appends one token per sequence (int64 [prompts], in prompt order) and
  /// returns the logits after it, float32 [prompts, vocab]. UsageError when
  /// the prefill's max_new_tokens are used up or a token is outside the
  /// vocabulary.
  torch::Tensor step(const torch::Tensor& tokens);

  /// Tokens each sequence may still take before the cache is full.
  std::int64_t tokens_left() const;

 private:
  // Runs `tokens` [B, S] at `positions` through the blocks with attention
  // restricted to `allowed` [B, 1, S, cache slots after them]; the logits of
  // the last column.
  torch::Tensor forward(const torch::Tensor& tokens, const torch::Tensor& positions,
                        const torch::Tensor& allowed);

  const model::LlamaModel& model_;
  std::optional<KvCache> cache_;
  std::optional<model::LayerPlans> layers_;  // each layer's RoPE table and window
  torch::Tensor key_is_real_;                // bool [B, capacity]: false for padding slots
  torch::Tensor next_position_;              // int64 [B, 1]: the RoPE position of each next token
};

}  // namespace nss::generate

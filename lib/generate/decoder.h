// Incremental decoding of a Llama model with continuous batching: a fixed
// number of rows decode side by side, each holding one sequence in its own
// KV-cache row (slot t is position t). start() runs new prompts into the
// rows named — right-padded, only those rows — while the other rows keep
// their sequences; step() then runs one new token per running row against
// its cache, so no prefix is recomputed and a row that finished takes the
// next sequence at once. Each sequence sees exactly what it would see alone:
// RoPE positions start at 0 at its first token and no query reads another
// sequence's or a later slot. A prompt started recently is copied from the
// cache rather than run again (every --records sample shares one). Works on
// any LlamaModel (nss_eval's loaders: a Hugging Face directory, a checkpoint
// step, LoRA adapters applied unmerged), in its dtype and on its device.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include <torch/types.h>

#include "generate/kv_cache.h"
#include "model/layer_plan.h"
#include "model/llama_model.h"

namespace nss::generate {

class Decoder {
 public:
  /// `rows` sequences side by side with `model` (which must outlive the
  /// decoder), each up to `capacity` tokens, its prompt included. UsageError
  /// (exit 2) for no rows or a capacity beyond max_position_embeddings.
  Decoder(const model::LlamaModel& model, std::int64_t rows, std::int64_t capacity);

  /// Starts prompts[i] in row rows[i] (dropping what the row held); the
  /// logits after each prompt's last token, float32 [n, vocab] on the
  /// model's device. UsageError for an empty prompt, a token outside the
  /// vocabulary or a prompt that leaves no room for a new token.
  torch::Tensor start(const std::vector<std::int64_t>& rows,
                      const std::vector<std::vector<std::int64_t>>& prompts);

  /// Appends tokens[r] to every row r with running[r] (the other rows keep
  /// their length; their tokens are not read) and returns the logits after
  /// it for every row, float32 [rows, vocab] (an idle row's mean nothing).
  /// UsageError when a running row is full or its token is outside the
  /// vocabulary.
  torch::Tensor step(const std::vector<std::int64_t>& tokens, const std::vector<bool>& running);

  std::int64_t rows() const { return static_cast<std::int64_t>(lengths_.size()); }
  /// Tokens row `row` holds, its prompt included.
  std::int64_t length(std::int64_t row) const { return lengths_.at(static_cast<std::size_t>(row)); }
  /// Tokens row `row` may still take before its cache row is full.
  std::int64_t tokens_left(std::int64_t row) const { return cache_.capacity() - length(row); }

 private:
  // What a started prompt left in the cache: its keys and values per layer
  // and the logits after it.
  struct KeptPrompt {
    std::vector<std::int64_t> tokens;
    std::vector<std::pair<torch::Tensor, torch::Tensor>> layers;
    torch::Tensor logits;  // float32 [vocab]
  };
  // Stores one layer's new keys and values and returns those to attend over.
  using Attend = std::function<std::pair<torch::Tensor, torch::Tensor>(
      int layer, const torch::Tensor& keys, const torch::Tensor& values)>;

  // Runs prompts never kept through the model into `rows`; their logits.
  torch::Tensor run_prompts(const std::vector<std::int64_t>& rows,
                            const std::vector<std::vector<std::int64_t>>& prompts);
  void keep(std::int64_t row, const std::vector<std::int64_t>& tokens, const torch::Tensor& logits);
  const KeptPrompt* kept(const std::vector<std::int64_t>& tokens) const;
  // The blocks over `tokens` [B, S] at `positions`, each query reading the
  // keys `allowed` [B, 1, S, keys] lets it (narrowed per layer to its window
  // by `windowed`); the final hidden states [B, S, hidden].
  torch::Tensor forward(const torch::Tensor& tokens, const torch::Tensor& positions,
                        const torch::Tensor& allowed,
                        const std::function<torch::Tensor(std::int64_t window)>& windowed,
                        const Attend& attend);
  torch::Tensor logits_of(const torch::Tensor& last_hidden) const;  // [B, 1, hidden] -> [B, vocab]
  void check_token(std::int64_t token) const;
  void check_prompt(std::int64_t row, const std::vector<std::int64_t>& prompt) const;

  const model::LlamaModel& model_;
  KvCache cache_;
  model::LayerPlans layers_;  // each layer's RoPE table and window
  std::vector<std::int64_t> lengths_;
  std::deque<KeptPrompt> kept_;
};

}  // namespace nss::generate

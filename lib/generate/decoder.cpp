#include "generate/decoder.h"

#include <algorithm>
#include <map>
#include <string>

#include <torch/torch.h>

#include "core/error.h"
#include "model/llama_functional.h"

namespace nss::generate {
namespace {

void check_token(std::int64_t token, std::int64_t vocab_size) {
  if (token < 0 || token >= vocab_size)
    throw UsageError("generate",
                     "token id " + std::to_string(token) +
                         " is outside the model's vocabulary of " + std::to_string(vocab_size),
                     "encode prompts with the model's own tokenizer");
}

// The prompts right-aligned in one int64 [B, longest] tensor: left padding
// keeps every sequence's next token in the same cache slot.
torch::Tensor left_padded(const std::vector<std::vector<std::int64_t>>& prompts,
                          std::int64_t longest) {
  torch::Tensor tokens =
      torch::zeros({static_cast<std::int64_t>(prompts.size()), longest}, torch::kInt64);
  for (std::size_t b = 0; b < prompts.size(); ++b) {
    const auto length = static_cast<std::int64_t>(prompts[b].size());
    tokens[static_cast<std::int64_t>(b)]
        .narrow(0, longest - length, length)
        .copy_(torch::tensor(prompts[b], torch::kInt64));
  }
  return tokens;
}

// Attention of q [B, heads, S, D] over the cached keys and values [B,
// kv_heads, T, D] without repeat_kv's copy of the whole cache at every step:
// the `groups` query heads that share a key/value head (head h reads h /
// groups) become rows of one [B, kv_heads, groups * S, D] query.
torch::Tensor grouped_attention(const torch::Tensor& q, const torch::Tensor& keys,
                                const torch::Tensor& values, const torch::Tensor& allowed,
                                std::int64_t groups, double scale) {
  const std::int64_t b = q.size(0), heads = q.size(1), s = q.size(2), d = q.size(3);
  const std::int64_t kv_heads = keys.size(1), t = keys.size(2);
  const torch::Tensor rows = q.reshape({b, kv_heads, groups * s, d});
  const torch::Tensor mask =
      s == 1 ? allowed
             : allowed.unsqueeze(2).expand({b, 1, groups, s, t}).reshape({b, 1, groups * s, t});
  return model::masked_attention(rows, keys, values, mask, scale).reshape({b, heads, s, d});
}

}  // namespace

Decoder::Decoder(const model::LlamaModel& model) : model_(model) {}

torch::Tensor Decoder::prefill(const std::vector<std::vector<std::int64_t>>& prompts,
                               std::int64_t max_new_tokens) {
  const config::ModelConfig& config = model_.config();
  if (prompts.empty()) throw UsageError("generate", "no prompts to decode");
  if (max_new_tokens < 0) throw UsageError("generate", "max_new_tokens must not be negative");
  std::int64_t longest = 0;
  std::vector<std::int64_t> lengths;
  for (const auto& prompt : prompts) {
    if (prompt.empty())
      throw UsageError("generate", "prompt " + std::to_string(lengths.size()) + " is empty",
                       "start every prompt with at least one token (its BOS, say)");
    for (const std::int64_t token : prompt) check_token(token, config.vocab_size);
    lengths.push_back(static_cast<std::int64_t>(prompt.size()));
    longest = std::max(longest, lengths.back());
  }
  const std::int64_t capacity = longest + max_new_tokens;
  if (capacity > config.max_position_embeddings)
    throw UsageError("generate",
                     "the longest prompt (" + std::to_string(longest) + " tokens) plus " +
                         std::to_string(max_new_tokens) + " new tokens exceed the model's " +
                         std::to_string(config.max_position_embeddings) + " positions",
                     "shorten the prompt or ask for fewer new tokens");

  const torch::Tensor weight = model_.unit_tensors(0).front();
  const torch::Device device = weight.device();
  const auto batch = static_cast<std::int64_t>(prompts.size());
  cache_.emplace(config.num_hidden_layers, batch, config.num_key_value_heads, capacity,
                 config.head_dim, weight.options().requires_grad(false));
  layers_.emplace(config, capacity, device);

  // Sequence b's first real token sits in slot longest - lengths[b]; padding
  // slots get position 0 (any finite angle: no real query reads them).
  const torch::Tensor first =
      (longest - torch::tensor(lengths, torch::kInt64)).unsqueeze(1);  // [B, 1]
  const torch::Tensor slots = torch::arange(longest, torch::kInt64).unsqueeze(0);
  const torch::Tensor positions = (slots - first).clamp_min(0);
  key_is_real_ = torch::zeros({batch, capacity}, torch::kBool);
  key_is_real_.narrow(1, 0, longest).copy_(slots >= first);
  next_position_ = torch::tensor(lengths, torch::kInt64).unsqueeze(1);
  key_is_real_ = key_is_real_.to(device);
  next_position_ = next_position_.to(device);

  // Causal over real keys; a padding query also reads itself, since a softmax
  // over no key is NaN and would reach the real queries through its cached
  // keys and values.
  const torch::Tensor causal = torch::ones({longest, longest}, torch::kBool).tril().to(device);
  const torch::Tensor itself = torch::eye(longest, torch::kBool).to(device);
  const torch::Tensor real = key_is_real_.narrow(1, 0, longest).unsqueeze(1);  // [B, 1, S]
  const torch::Tensor allowed = causal.logical_and(real.logical_or(itself)).unsqueeze(1);
  return forward(left_padded(prompts, longest).to(device), positions.to(device), allowed);
}

torch::Tensor Decoder::step(const torch::Tensor& tokens) {
  NSS_ASSERT(cache_.has_value(), "generate", "step() before prefill()");
  const std::int64_t batch = cache_->batch_size();
  NSS_ASSERT(tokens.dim() == 1 && tokens.size(0) == batch && tokens.scalar_type() == torch::kInt64,
             "generate", "step() takes one int64 token per sequence");
  if (tokens_left() == 0)
    throw UsageError("generate",
                     "no room for another token: all " + std::to_string(cache_->capacity()) +
                         " slots of the KV cache are used",
                     "ask prefill() for more max_new_tokens");
  check_token(tokens.min().item<std::int64_t>(), model_.config().vocab_size);
  check_token(tokens.max().item<std::int64_t>(), model_.config().vocab_size);

  const std::int64_t slot = cache_->length();
  key_is_real_.narrow(1, slot, 1).fill_(true);
  const torch::Tensor allowed = key_is_real_.narrow(1, 0, slot + 1).view({batch, 1, 1, slot + 1});
  const torch::Tensor logits =
      forward(tokens.to(key_is_real_.device()).unsqueeze(1), next_position_, allowed);
  next_position_ = next_position_ + 1;
  return logits;
}

std::int64_t Decoder::tokens_left() const {
  return cache_ ? cache_->capacity() - cache_->length() : 0;
}

torch::Tensor Decoder::forward(const torch::Tensor& tokens, const torch::Tensor& positions,
                               const torch::Tensor& allowed) {
  torch::NoGradGuard no_grad;
  const config::ModelConfig& config = model_.config();
  const std::int64_t groups = config.num_attention_heads / config.num_key_value_heads;
  const arch::Architecture& architecture = layers_->architecture();
  torch::Tensor hidden =
      model::embedding_forward(tokens, model_.unit_tensors(0).front(), architecture);
  const double scale = model::attention_scale(config, architecture);
  // Slots advance with positions, so a window over slots is one over positions.
  const std::int64_t key_slots = cache_->length() + tokens.size(1);
  std::map<std::int64_t, torch::Tensor> windowed;  // window -> allowed within it
  for (int layer = 0; layer < config.num_hidden_layers; ++layer) {
    const model::LayerPlan plan = (*layers_)[layer];
    torch::Tensor& layer_allowed = windowed[plan.window];
    if (!layer_allowed.defined())
      layer_allowed = plan.window <= 0
                          ? allowed
                          : allowed.logical_and(model::sliding_window_mask(
                                tokens.size(1), key_slots, plan.window, allowed.device()));
    const auto attend = [&](const torch::Tensor& q, const torch::Tensor& k,
                            const torch::Tensor& v) {
      const auto [keys, values] = cache_->append(layer, k, v);
      return grouped_attention(q, keys, values, layer_allowed, groups, scale);
    };
    hidden = model::decoder_block_forward(hidden, model_.unit_tensors(layer + 1), config,
                                          model_.lora(), plan, nullptr, positions, attend);
  }
  cache_->advance(tokens.size(1));
  const torch::Tensor last = hidden.narrow(1, hidden.size(1) - 1, 1);
  return model::head_logits_forward(last, model_.unit_tensors(model_.num_units() - 1).front(),
                                    model_.lm_head_weight(), config)
      .squeeze(1)
      .to(torch::kFloat32);
}

}  // namespace nss::generate

// Incremental decoding against the full forward of the same model: at every
// step the cached logits of each sequence of a left-padded batch equal the
// logits of that sequence run alone from scratch, with GQA, tied embeddings,
// RoPE scaling, unmerged LoRA adapters and every family's features (windows
// shorter than the sequences, layers without RoPE, biases, q/k and sandwich
// norms); greedy decoding picks the same tokens; bf16 stays close; misuse is
// a UsageError.
#include "generate/decoder.h"

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "arch/architecture.h"
#include "config/model_presets.h"
#include "core/error.h"
#include "model/initial_weights.h"
#include "model/llama_model.h"
#include "model/param_spec.h"

namespace nss::generate {
namespace {

using Prompts = std::vector<std::vector<std::int64_t>>;

config::ModelConfig tiny() {
  config::ModelConfig m;
  EXPECT_TRUE(config::apply_model_preset("tiny", m));  // 4 query heads, 2 key/value heads
  return m;
}

model::LlamaModel build(const config::ModelConfig& m, const config::LoraConfig& lora,
                        std::uint64_t seed, torch::Dtype dtype = torch::kFloat32) {
  model::LlamaModel built(m, lora, dtype);
  built.load(model::InitialWeights(m, lora, seed));
  return built;
}

// Adapters on every projection with non-zero B, so they change the logits.
model::LlamaModel adapted(const config::ModelConfig& m) {
  config::LoraConfig lora;
  lora.enabled = true;
  lora.rank = 4;
  lora.alpha = 8;
  lora.targets = model::projection_names();
  model::LlamaModel built = build(m, lora, 4);
  torch::NoGradGuard no_grad;
  torch::manual_seed(4);
  for (int unit = 0; unit < built.num_units(); ++unit)
    for (std::size_t i = 0; i < built.unit_specs(unit).size(); ++i)
      if (built.unit_specs(unit)[i].role == model::ParamRole::kLoraB)
        built.unit_tensors(unit)[i].normal_(0.0, 0.5);
  return built;
}

Prompts random_prompts(const config::ModelConfig& m, const std::vector<std::int64_t>& lengths) {
  torch::manual_seed(static_cast<std::uint64_t>(lengths.size()));
  Prompts prompts;
  for (const std::int64_t length : lengths) {
    const torch::Tensor t = torch::randint(m.vocab_size, {length}, torch::kInt64);
    prompts.emplace_back(t.data_ptr<std::int64_t>(), t.data_ptr<std::int64_t>() + length);
  }
  return prompts;
}

// The logits after the last token of `sequence`, from the full forward.
torch::Tensor full_forward_last(const model::LlamaModel& model,
                                const std::vector<std::int64_t>& sequence) {
  torch::NoGradGuard no_grad;
  const torch::Tensor logits = model.logits(torch::tensor(sequence, torch::kInt64).unsqueeze(0));
  return logits[0][-1].to(torch::kFloat32);
}

// The largest difference, over `steps` decoding steps fed random tokens (and
// the prefill), between the cached logits and each sequence's full forward.
double worst_difference(const model::LlamaModel& model, Prompts sequences, std::int64_t steps) {
  Decoder decoder(model);
  torch::Tensor logits = decoder.prefill(sequences, steps);
  double worst = 0;
  for (std::int64_t step = 0;; ++step) {
    EXPECT_EQ(logits.scalar_type(), torch::kFloat32);
    for (std::size_t b = 0; b < sequences.size(); ++b)
      worst = std::max(
          worst, (logits[static_cast<std::int64_t>(b)] - full_forward_last(model, sequences[b]))
                     .abs()
                     .max()
                     .item<double>());
    if (step == steps) break;
    const torch::Tensor next = torch::randint(
        model.config().vocab_size, {static_cast<std::int64_t>(sequences.size())}, torch::kInt64);
    for (std::size_t b = 0; b < sequences.size(); ++b)
      sequences[b].push_back(next[static_cast<std::int64_t>(b)].item<std::int64_t>());
    logits = decoder.step(next);
  }
  EXPECT_EQ(decoder.tokens_left(), 0);
  return worst;
}

void expect_cached_equals_full(const model::LlamaModel& model, const std::string& what) {
  const auto m = model.config();
  EXPECT_LT(worst_difference(model, random_prompts(m, {7}), 12), 1e-5) << what << ", batch 1";
  EXPECT_LT(worst_difference(model, random_prompts(m, {5, 9, 2}), 12), 1e-5)
      << what << ", left-padded batch of 5, 9, 2";
}

TEST(Decoder, CachedLogitsEqualFullForwardWithGroupedQueryAttention) {
  expect_cached_equals_full(build(tiny(), {}, 1), "GQA, untied");
}

TEST(Decoder, CachedLogitsEqualFullForwardWithTiedEmbeddingsAndRopeScaling) {
  auto m = tiny();
  m.tie_word_embeddings = true;
  expect_cached_equals_full(build(m, {}, 2), "tied");
  m.rope_scaling.type = config::RopeScaling::kLinear;
  m.rope_scaling.factor = 4;
  expect_cached_equals_full(build(m, {}, 2), "tied, linear RoPE scaling");
  m.rope_scaling.type = config::RopeScaling::kLlama3;
  m.rope_scaling.factor = 8;
  expect_cached_equals_full(build(m, {}, 2), "tied, llama3 RoPE scaling");
}

// Each family with its features in use: the first layer slides in a window
// of 4 keys (prompts of up to 9 tokens and 12 steps go far past it), SmolLM3's
// last layer has no RoPE, Gemma 3's local layer its own base and its queries
// their own scale. The cache keeps every key; the window is the mask's.
TEST(Decoder, CachedLogitsEqualFullForwardForEveryFamily) {
  for (const arch::Family& family : arch::families()) {
    config::ModelConfig m = tiny();
    m.family = family.name;
    if (family.sliding_window) {
      m.sliding_window = 4;
      m.layer_types.assign(static_cast<std::size_t>(m.num_hidden_layers), arch::kFullAttention);
      m.layer_types.front() = arch::kSlidingAttention;
    }
    if (family.no_rope_interval > 0) m.layer_types.back() = arch::kFullAttentionNoRope;
    if (family.name == "gemma3") {
      m.rope_local_theta = 10000;
      m.query_pre_attn_scalar = 24;
    }
    expect_cached_equals_full(build(m, {}, 5), family.name);
  }
}

TEST(Decoder, CachedLogitsEqualFullForwardWithMultiQueryAttention) {
  auto m = tiny();
  m.num_key_value_heads = 1;
  expect_cached_equals_full(build(m, {}, 3), "MQA");
}

TEST(Decoder, LoraAdaptersUnmergedMatchTheirFullForward) {
  const auto m = tiny();
  const auto model = adapted(m);
  // The adapters matter: the base model's logits are far from these.
  const auto prompt = random_prompts(m, {6}).front();
  const auto base = build(m, {}, 4);
  EXPECT_GT((full_forward_last(model, prompt) - full_forward_last(base, prompt))
                .abs()
                .max()
                .item<double>(),
            1e-2);
  expect_cached_equals_full(model, "LoRA");
}

TEST(Decoder, GreedyDecodingPicksTheTokensOfFullForwards) {
  const auto m = tiny();
  const auto model = adapted(m);
  Prompts cached = random_prompts(m, {5, 9, 2});
  Prompts reference = cached;
  const std::int64_t new_tokens = 12;
  Decoder decoder(model);
  torch::Tensor logits = decoder.prefill(cached, new_tokens);
  for (std::int64_t step = 0; step < new_tokens; ++step) {
    const torch::Tensor next = logits.argmax(-1);
    for (std::size_t b = 0; b < cached.size(); ++b) {
      cached[b].push_back(next[static_cast<std::int64_t>(b)].item<std::int64_t>());
      reference[b].push_back(full_forward_last(model, reference[b]).argmax().item<std::int64_t>());
    }
    if (step + 1 < new_tokens) logits = decoder.step(next);
  }
  for (std::size_t b = 0; b < cached.size(); ++b)
    EXPECT_EQ(cached[b], reference[b]) << "sequence " << b;
}

// bf16 rounds differently along the two paths (the padded batch, the cache's
// shorter matmuls): within 4 bf16 steps (2^-8 relative) of the largest
// logit, where reading the padding is over 100 steps off; fp32 logits come back.
TEST(Decoder, Bfloat16StaysCloseToItsFullForward) {
  const auto m = tiny();
  const auto model = build(m, {}, 6, torch::kBFloat16);
  const double scale =
      full_forward_last(model, random_prompts(m, {9}).front()).abs().max().item<double>();
  EXPECT_LT(worst_difference(model, random_prompts(m, {5, 9, 2}), 12), 4 * std::ldexp(scale, -8));
}

TEST(Decoder, RefusesEmptyPromptsForeignTokensAndTooManyTokens) {
  auto m = tiny();
  m.max_position_embeddings = 16;
  const auto model = build(m, {}, 7);
  Decoder decoder(model);
  EXPECT_THROW(decoder.prefill({}, 4), UsageError);
  EXPECT_THROW(decoder.prefill({{1, 2}, {}}, 4), UsageError);
  EXPECT_THROW(decoder.prefill({{1, m.vocab_size}}, 4), UsageError);
  EXPECT_THROW(decoder.prefill({{1, 2, 3}}, 14), UsageError);
  decoder.prefill({{1, 2, 3}, {4}}, 1);
  EXPECT_THROW(decoder.step(torch::tensor({1, -1}, torch::kInt64)), UsageError);
  decoder.step(torch::tensor({1, 2}, torch::kInt64));
  EXPECT_EQ(decoder.tokens_left(), 0);
  EXPECT_THROW(decoder.step(torch::tensor({1, 2}, torch::kInt64)), UsageError);
}

}  // namespace
}  // namespace nss::generate

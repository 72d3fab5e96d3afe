// Incremental decoding against the full forward of the same model: at every
// step the cached logits of each sequence of a batch of unequal prompts equal
// the logits of that sequence run alone from scratch, with GQA, tied
// embeddings, RoPE scaling, unmerged LoRA adapters and every family's
// features (windows shorter than the sequences, layers without RoPE, biases,
// q/k and sandwich norms) — and still when rows take new prompts mid-way,
// idle, or copy a kept prompt (continuous batching); greedy decoding picks
// the same tokens; bf16 stays close; misuse is a UsageError.
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

std::vector<std::int64_t> all_rows(std::size_t count) {
  std::vector<std::int64_t> rows;
  for (std::size_t r = 0; r < count; ++r) rows.push_back(static_cast<std::int64_t>(r));
  return rows;
}

std::int64_t longest(const Prompts& prompts) {
  std::size_t n = 0;
  for (const auto& p : prompts) n = std::max(n, p.size());
  return static_cast<std::int64_t>(n);
}

// The largest difference between logits rows `rows` and the full forward of
// the sequences they follow.
double difference(const model::LlamaModel& model, const torch::Tensor& logits,
                  const Prompts& sequences, const std::vector<std::int64_t>& rows) {
  double worst = 0;
  for (std::size_t i = 0; i < rows.size(); ++i)
    worst = std::max(worst, (logits[static_cast<std::int64_t>(i)] -
                             full_forward_last(model, sequences[static_cast<std::size_t>(rows[i])]))
                                .abs()
                                .max()
                                .item<double>());
  return worst;
}

// The largest difference, over `steps` decoding steps fed random tokens (and
// the start), between the cached logits and each sequence's full forward.
double worst_difference(const model::LlamaModel& model, Prompts sequences, std::int64_t steps) {
  const auto rows = all_rows(sequences.size());
  Decoder decoder(model, static_cast<std::int64_t>(rows.size()), longest(sequences) + steps);
  torch::Tensor logits = decoder.start(rows, sequences);
  EXPECT_EQ(logits.scalar_type(), torch::kFloat32);
  double worst = difference(model, logits, sequences, rows);
  const std::vector<bool> running(rows.size(), true);
  for (std::int64_t step = 0; step < steps; ++step) {
    const torch::Tensor drawn = torch::randint(
        model.config().vocab_size, {static_cast<std::int64_t>(rows.size())}, torch::kInt64);
    std::vector<std::int64_t> next(drawn.data_ptr<std::int64_t>(),
                                   drawn.data_ptr<std::int64_t>() + drawn.numel());
    for (std::size_t b = 0; b < sequences.size(); ++b) sequences[b].push_back(next[b]);
    worst = std::max(worst, difference(model, decoder.step(next, running), sequences, rows));
  }
  for (std::size_t b = 0; b < sequences.size(); ++b)
    EXPECT_EQ(decoder.tokens_left(static_cast<std::int64_t>(b)),
              longest(sequences) - static_cast<std::int64_t>(sequences[b].size()));
  return worst;
}

// Continuous batching: three rows fed random tokens for 14 steps; row 2
// takes a new prompt at step 4, row 0 the prompt row 2 began with (kept:
// copied, not run) at step 6, row 1 idles at steps 7-9 and takes a new prompt
// at step 10 beside a copy of it in row 2. Every running row's logits at
// every step equal its sequence's full forward.
double worst_with_restarts(const model::LlamaModel& model) {
  const Prompts prompts = random_prompts(model.config(), {5, 9, 2, 7, 3});
  Prompts sequences = {prompts[0], prompts[1], prompts[2]};
  Decoder decoder(model, 3, 9 + 14);
  double worst = difference(model, decoder.start({0, 1, 2}, sequences), sequences, {0, 1, 2});
  std::vector<bool> running(3, true);
  const auto restart = [&](const std::vector<std::int64_t>& rows, const Prompts& starts) {
    for (std::size_t i = 0; i < rows.size(); ++i)
      sequences[static_cast<std::size_t>(rows[i])] = starts[i];
    worst = std::max(worst, difference(model, decoder.start(rows, starts), sequences, rows));
    for (const std::int64_t row : rows) running[static_cast<std::size_t>(row)] = true;
  };
  for (std::int64_t step = 0; step < 14; ++step) {
    if (step == 4) restart({2}, {prompts[3]});
    if (step == 6) restart({0}, {prompts[2]});
    if (step == 7) running[1] = false;
    if (step == 10) restart({1, 2}, {prompts[4], prompts[4]});
    std::vector<std::int64_t> next(3, 0), stepped;
    for (std::int64_t r = 0; r < 3; ++r) {
      if (!running[static_cast<std::size_t>(r)]) continue;
      next[static_cast<std::size_t>(r)] =
          torch::randint(model.config().vocab_size, {1}, torch::kInt64).item<std::int64_t>();
      sequences[static_cast<std::size_t>(r)].push_back(next[static_cast<std::size_t>(r)]);
      stepped.push_back(r);
    }
    const torch::Tensor logits = decoder.step(next, running);
    worst = std::max(worst, difference(model, logits.index_select(0, torch::tensor(stepped)),
                                       sequences, stepped));
  }
  return worst;
}

void expect_cached_equals_full(const model::LlamaModel& model, const std::string& what) {
  const auto m = model.config();
  EXPECT_LT(worst_difference(model, random_prompts(m, {7}), 12), 1e-5) << what << ", batch 1";
  EXPECT_LT(worst_difference(model, random_prompts(m, {5, 9, 2}), 12), 1e-5)
      << what << ", batch of 5, 9, 2";
  EXPECT_LT(worst_with_restarts(model), 1e-5) << what << ", rows restarted, idle and copied";
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
  Decoder decoder(model, 3, 9 + new_tokens);
  torch::Tensor logits = decoder.start({0, 1, 2}, cached);
  for (std::int64_t step = 0; step < new_tokens; ++step) {
    const torch::Tensor next = logits.argmax(-1);
    std::vector<std::int64_t> tokens;
    for (std::size_t b = 0; b < cached.size(); ++b) {
      tokens.push_back(next[static_cast<std::int64_t>(b)].item<std::int64_t>());
      cached[b].push_back(tokens.back());
      reference[b].push_back(full_forward_last(model, reference[b]).argmax().item<std::int64_t>());
    }
    if (step + 1 < new_tokens) logits = decoder.step(tokens, {true, true, true});
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
  EXPECT_THROW(Decoder(model, 1, 17), UsageError);
  EXPECT_THROW(Decoder(model, 0, 8), UsageError);
  Decoder decoder(model, 2, 4);
  EXPECT_THROW(decoder.start({}, {}), UsageError);
  EXPECT_THROW(decoder.start({0, 1}, {{1, 2}, {}}), UsageError);
  EXPECT_THROW(decoder.start({0}, {{1, m.vocab_size}}), UsageError);
  EXPECT_THROW(decoder.start({0}, {{1, 2, 3, 4}}), UsageError);   // no room for a new token
  EXPECT_THROW(decoder.step({1, 2}, {true, false}), UsageError);  // row 0 never started
  decoder.start({0, 1}, {{1, 2, 3}, {4}});
  EXPECT_THROW(decoder.step({1, -1}, {true, true}), UsageError);
  decoder.step({1, 2}, {true, true});
  EXPECT_EQ(decoder.tokens_left(0), 0);
  EXPECT_EQ(decoder.tokens_left(1), 2);
  EXPECT_THROW(decoder.step({1, 2}, {true, true}), UsageError);
  decoder.step({1, 2}, {false, true});  // an idle full row is no error
  EXPECT_EQ(decoder.tokens_left(1), 1);
}

}  // namespace
}  // namespace nss::generate

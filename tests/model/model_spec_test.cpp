// Parameter specs, counts and deterministic initialisation (plain C++).
#include <cmath>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "config/model_presets.h"
#include "core/error.h"
#include "model/counter_rng.h"
#include "model/initial_weights.h"
#include "model/param_spec.h"
#include "model/unit_layouts.h"

namespace nss::model {
namespace {

config::ModelConfig preset(const std::string& name) {
  config::ModelConfig m;
  EXPECT_TRUE(config::apply_model_preset(name, m));
  return m;
}

config::LoraConfig lora_on(std::vector<std::string> targets, std::int64_t rank = 8) {
  config::LoraConfig lora;
  lora.enabled = true;
  lora.rank = rank;
  lora.targets = std::move(targets);
  return lora;
}

TEST(CounterRng, PhiloxKnownAnswers) {
  // Random123's kat_vectors for philox4x32_10.
  using W = std::array<std::uint32_t, 4>;
  EXPECT_EQ(philox4x32({0, 0, 0, 0}, {0, 0}), (W{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(philox4x32({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
            (W{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(philox4x32({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}),
            (W{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

// Published parameter counts (model cards / safetensors metadata) match our shapes.
TEST(ParamSpec, PresetCountsMatchPublishedSizes) {
  const std::map<std::string, std::int64_t> published = {
      {"llama-3.2-1b", 1'235'814'400},    {"llama-3.2-3b", 3'212'749'824},
      {"llama-3.1-8b", 8'030'261'248},    {"smollm2-135m", 134'515'008},
      {"smollm2-360m", 361'821'120},      {"smollm2-1.7b", 1'711'376'384},
      {"tinyllama-1.1b", 1'100'048'384},  {"tiny", 125'504},
      {"qwen2.5-0.5b", 494'032'768},      {"qwen3-0.6b", 596'049'920},
      {"mistral-7b-v0.1", 7'241'732'096}, {"smollm3-3b", 3'075'098'624},
      {"gemma3-1b", 999'885'952}};
  const config::LoraConfig no_lora;
  for (const auto& name : config::preset_names()) {
    const auto m = preset(name);
    const ParameterCount counted = count_parameters(m, no_lora);
    const ParameterCount formula = parameter_count_formula(m, no_lora);
    EXPECT_EQ(counted.total, published.at(name)) << name;
    EXPECT_EQ(counted.trainable, counted.total) << name;
    EXPECT_EQ(formula.total, counted.total) << name;
    EXPECT_EQ(formula.trainable, counted.trainable) << name;
  }
}

TEST(ParamSpec, LoraCounts) {
  const auto m = preset("llama-3.2-1b");
  const auto lora = lora_on({"q_proj", "k_proj", "v_proj", "o_proj"}, 16);
  const ParameterCount counted = count_parameters(m, lora);
  // q, o: 16 * (2048 + 2048); k, v: 16 * (2048 + 512); 16 layers.
  const std::int64_t adapters = 16 * (2 * 16 * 4096 + 2 * 16 * 2560);
  EXPECT_EQ(counted.trainable, adapters);
  EXPECT_EQ(counted.total, 1'235'814'400 + adapters);
  const ParameterCount formula = parameter_count_formula(m, lora);
  EXPECT_EQ(formula.total, counted.total);
  EXPECT_EQ(formula.trainable, counted.trainable);
}

TEST(ParamSpec, UnitsNamesAndOrder) {
  auto m = preset("tiny");
  const auto lora = lora_on({"q_proj", "down_proj"}, 4);
  EXPECT_EQ(num_units(m), 4);
  const auto embed = unit_parameters(m, lora, 0);
  ASSERT_EQ(embed.size(), 1u);
  EXPECT_EQ(embed[0].name, "model.embed_tokens.weight");
  EXPECT_FALSE(embed[0].trainable);

  const auto block = unit_parameters(m, lora, 2);
  std::vector<std::string> names;
  for (const auto& p : block) names.push_back(p.name);
  const std::string l = "model.layers.1.";
  EXPECT_EQ(names,
            (std::vector<std::string>{
                l + "input_layernorm.weight", l + "self_attn.q_proj.weight",
                l + "self_attn.q_proj.lora_A.weight", l + "self_attn.q_proj.lora_B.weight",
                l + "self_attn.k_proj.weight", l + "self_attn.v_proj.weight",
                l + "self_attn.o_proj.weight", l + "post_attention_layernorm.weight",
                l + "mlp.gate_proj.weight", l + "mlp.up_proj.weight", l + "mlp.down_proj.weight",
                l + "mlp.down_proj.lora_A.weight", l + "mlp.down_proj.lora_B.weight"}));
  EXPECT_EQ(block[1].shape, (std::vector<std::int64_t>{64, 64}));  // q: heads * head_dim x hidden
  EXPECT_EQ(block[4].shape, (std::vector<std::int64_t>{32, 64}));  // k: kv_heads * head_dim
  EXPECT_EQ(block[2].shape, (std::vector<std::int64_t>{4, 64}));   // lora_A [r, in]
  EXPECT_EQ(block[12].shape, (std::vector<std::int64_t>{64, 4}));  // lora_B [out, r]
  EXPECT_TRUE(block[2].trainable);
  EXPECT_FALSE(block[1].trainable);

  EXPECT_EQ(unit_parameters(m, lora, 3).size(), 2u);  // norm + lm_head
  m.tie_word_embeddings = true;
  const auto head = unit_parameters(m, lora, 3);
  ASSERT_EQ(head.size(), 1u);
  EXPECT_EQ(head[0].name, "model.norm.weight");
  EXPECT_THROW(unit_parameters(m, lora, 4), InternalError);
}

// The FSDP layouts follow unit_parameters: trainable and frozen split, weight
// decay on projections and adapters (embeddings only when asked), never norms.
TEST(UnitLayouts, FollowTheParameterSpecsAndTheDecayRule) {
  config::Config config;
  config.model = preset("tiny");
  config.training.lora = lora_on({"q_proj"}, 4);
  const auto layouts = unit_layouts(config, 3);
  ASSERT_EQ(layouts.size(), static_cast<std::size_t>(num_units(config.model)));
  for (int u = 0; u < num_units(config.model); ++u) {
    const auto specs = unit_parameters(config.model, config.training.lora, u);
    const auto& layout = layouts[static_cast<std::size_t>(u)];
    EXPECT_EQ(layout.world_size(), 3);
    ASSERT_EQ(layout.params().size(), specs.size());
    for (std::size_t i = 0; i < specs.size(); ++i) {
      EXPECT_EQ(layout.params()[i].name, specs[i].name);
      EXPECT_EQ(layout.params()[i].trainable, specs[i].trainable);
      EXPECT_EQ(layout.params()[i].decay, weight_decayed(specs[i].role, false));
    }
  }
  EXPECT_TRUE(weight_decayed(ParamRole::kLinear, false));
  EXPECT_TRUE(weight_decayed(ParamRole::kLoraB, false));
  EXPECT_FALSE(weight_decayed(ParamRole::kNorm, true));
  EXPECT_FALSE(weight_decayed(ParamRole::kEmbedding, false));
  EXPECT_TRUE(weight_decayed(ParamRole::kEmbedding, true));
  EXPECT_EQ(unit_label(0, 4), "unit 0 (embedding)");
  EXPECT_EQ(unit_label(2, 4), "unit 2 (block 1)");
  EXPECT_EQ(unit_label(3, 4), "unit 3 (head)");
}

TEST(Init, AnySliceEqualsTheSameRangeOfTheWhole) {
  const auto m = preset("tiny");
  const auto lora = lora_on({"q_proj", "k_proj", "v_proj", "o_proj"}, 4);
  for (const auto& spec : all_parameters(m, lora)) {
    const std::int64_t n = spec.numel();
    std::vector<float> whole(n);
    init_parameter_slice(spec, m, 7, 0, n, whole.data());
    // Ragged pieces that start and end inside Philox blocks.
    std::vector<float> pieces(n);
    for (std::int64_t offset = 0, step = 1; offset < n; offset += step, step = step * 3 % 37 + 1) {
      const std::int64_t count = std::min(step, n - offset);
      init_parameter_slice(spec, m, 7, offset, count, pieces.data() + offset);
    }
    EXPECT_EQ(whole, pieces) << spec.name;
  }
}

TEST(Init, DistributionsFollowHuggingFaceAndPeft) {
  const auto m = preset("tiny");
  const auto lora = lora_on({"q_proj"}, 8);
  const auto block = unit_parameters(m, lora, 1);
  auto values = [&](const ParamSpec& spec, std::uint64_t seed) {
    std::vector<float> v(spec.numel());
    init_parameter_slice(spec, m, seed, 0, spec.numel(), v.data());
    return v;
  };
  const auto embedding = unit_parameters(m, lora, 0)[0];
  const auto e = values(embedding, 1);
  double sum = 0, squares = 0;
  for (float x : e) sum += x, squares += double(x) * x;
  const double mean = sum / e.size(), stddev = std::sqrt(squares / e.size() - mean * mean);
  EXPECT_NEAR(mean, 0.0, 0.001);
  EXPECT_NEAR(stddev, 0.02, 0.0005);

  for (float x : values(block[0], 1)) EXPECT_EQ(x, 1.0f);  // input_layernorm
  const auto a = values(block[2], 1);                      // q_proj.lora_A [8, 64]
  const float bound = 1.0f / 8.0f;
  float largest = 0;
  for (float x : a) largest = std::max(largest, std::abs(x));
  EXPECT_LE(largest, bound);
  EXPECT_GT(largest, 0.9f * bound);
  for (float x : values(block[3], 1)) EXPECT_EQ(x, 0.0f);  // lora_B

  // Different names and seeds give different streams; the same give the same.
  EXPECT_NE(values(block[1], 1), values(block[4], 1));
  EXPECT_NE(values(block[1], 1), values(block[1], 2));
  EXPECT_EQ(values(block[1], 3), values(block[1], 3));
}

TEST(Init, KeepMaskRateAndDeterminism) {
  const PhiloxKey key = stream_key(5, "mask");
  std::vector<std::uint8_t> a(100000), b(100000), c(100000);
  fill_keep_mask(key, 11, 100000, 0.25, a.data());
  fill_keep_mask(key, 11, 100000, 0.25, b.data());
  fill_keep_mask(key, 12, 100000, 0.25, c.data());
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  double kept = 0;
  for (auto x : a) kept += x;
  EXPECT_NEAR(kept / a.size(), 0.75, 0.01);
}

}  // namespace
}  // namespace nss::model

// Model families as data: each family's block tensors and their Hugging Face
// names, the layer plan a model's keys give (sliding windows, layers without
// RoPE, Gemma 3's local RoPE base), the scalings, and the errors for keys a
// family does not have.
#include "arch/architecture.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/error.h"

namespace nss::arch {
namespace {

config::ModelConfig tiny(const std::string& family) {
  config::ModelConfig m;  // hidden 64, 2 layers, 4 heads, 2 kv heads, head_dim 16
  m.family = family;
  return m;
}

std::vector<std::string> names(const Architecture& a) {
  std::vector<std::string> out;
  for (const auto& t : a.block) out.push_back(t.name);
  return out;
}

TEST(Architecture, LlamaBlockIsTodaysOrder) {
  const Architecture a = describe(tiny("llama"));
  EXPECT_EQ(names(a), (std::vector<std::string>{
                          "input_layernorm.weight", "self_attn.q_proj.weight",
                          "self_attn.k_proj.weight", "self_attn.v_proj.weight",
                          "self_attn.o_proj.weight", "post_attention_layernorm.weight",
                          "mlp.gate_proj.weight", "mlp.up_proj.weight", "mlp.down_proj.weight"}));
  EXPECT_EQ(a.block[1].shape, (std::vector<std::int64_t>{64, 64}));
  EXPECT_EQ(a.block[2].shape, (std::vector<std::int64_t>{32, 64}));
  EXPECT_DOUBLE_EQ(a.query_scale, 0.25);  // 16^-1/2
  EXPECT_DOUBLE_EQ(a.embedding_scale, 1.0);
  ASSERT_EQ(a.layers.size(), 2u);
  EXPECT_FALSE(a.layers[0].sliding);
  EXPECT_TRUE(a.layers[1].rope);
}

TEST(Architecture, BiasesFollowTheFamilyAndTheKey) {
  const Architecture qwen2 = describe(tiny("qwen2"));
  EXPECT_EQ(names(qwen2)[2], "self_attn.q_proj.bias");
  EXPECT_EQ(qwen2.block[2].kind, TensorKind::kBias);
  EXPECT_EQ(qwen2.block[2].shape, (std::vector<std::int64_t>{64}));
  EXPECT_EQ(qwen2.block.size(), 12u);  // q, k, v biases; no o bias
  config::ModelConfig llama = tiny("llama");
  EXPECT_EQ(describe(llama).block.size(), 9u);
  llama.attention_bias = true;
  EXPECT_EQ(describe(llama).block.size(), 13u);  // q, k, v and o
  config::ModelConfig mistral = tiny("mistral");
  mistral.attention_bias = true;  // not a Mistral key: no bias
  EXPECT_EQ(describe(mistral).block.size(), 9u);
}

TEST(Architecture, Gemma3HasSandwichAndHeadNormsAndItsScalings) {
  config::ModelConfig m = tiny("gemma3");
  m.num_hidden_layers = 6;
  m.sliding_window = 4;
  m.rope_theta = 1e6;
  m.rope_local_theta = 1e4;
  m.query_pre_attn_scalar = 256;
  m.layer_types = {"sliding_attention", "sliding_attention", "sliding_attention",
                   "sliding_attention", "sliding_attention", "full_attention"};
  const Architecture a = describe(m);
  EXPECT_EQ(names(a),
            (std::vector<std::string>{
                "input_layernorm.weight", "self_attn.q_proj.weight", "self_attn.k_proj.weight",
                "self_attn.v_proj.weight", "self_attn.o_proj.weight", "self_attn.q_norm.weight",
                "self_attn.k_norm.weight", "post_attention_layernorm.weight",
                "pre_feedforward_layernorm.weight", "post_feedforward_layernorm.weight",
                "mlp.gate_proj.weight", "mlp.up_proj.weight", "mlp.down_proj.weight"}));
  EXPECT_EQ(a.block[5].shape, (std::vector<std::int64_t>{16}));
  EXPECT_EQ(a.family->norm_scale, NormScale::kOnePlusWeight);
  EXPECT_EQ(a.family->activation, Activation::kGeluTanh);
  EXPECT_DOUBLE_EQ(a.query_scale, 1.0 / 16);
  EXPECT_DOUBLE_EQ(a.embedding_scale, 8.0);
  EXPECT_TRUE(a.layers[0].sliding);
  EXPECT_EQ(a.layers[0].window, 4);
  EXPECT_DOUBLE_EQ(a.layers[0].rope_theta, 1e4);
  EXPECT_FALSE(a.layers[0].rope_scaled);
  EXPECT_FALSE(a.layers[5].sliding);
  EXPECT_DOUBLE_EQ(a.layers[5].rope_theta, 1e6);
  EXPECT_TRUE(a.layers[5].rope_scaled);
}

TEST(Architecture, LayersWithoutRope) {
  config::ModelConfig m = tiny("smollm3");
  m.layer_types = {"full_attention", "full_attention_no_rope"};
  const Architecture a = describe(m);
  EXPECT_TRUE(a.layers[0].rope);
  EXPECT_FALSE(a.layers[1].rope);
}

void expect_usage_error(const config::ModelConfig& m, const std::string& needle) {
  try {
    describe(m);
    ADD_FAILURE() << "no error for " << needle;
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(Architecture, KeysAFamilyDoesNotHaveAreRefused) {
  expect_usage_error(tiny("gpt2"), "model.family is 'gpt2'");
  config::ModelConfig m = tiny("llama");
  m.sliding_window = 8;
  m.layer_types = {"sliding_attention", "full_attention"};
  expect_usage_error(m, "family llama has no sliding-window attention");
  m.family = "mistral";
  m.layer_types = {"full_attention"};
  expect_usage_error(m, "lists 1 layers but model.num_hidden_layers is 2");
  m.layer_types = {"chunked_attention", "full_attention"};
  expect_usage_error(m, "model.layer_types[0] is 'chunked_attention'");
  m.sliding_window = 0;
  m.layer_types = {"sliding_attention", "full_attention"};
  expect_usage_error(m, "model.sliding_window is 0");
}

TEST(Architecture, ModelTypesNameTheirFamilies) {
  EXPECT_EQ(family_of_model_type("gemma3_text")->name, "gemma3");
  EXPECT_EQ(family_of_model_type("qwen2")->hf_architecture, "Qwen2ForCausalLM");
  EXPECT_EQ(family_of_model_type("gpt_neox"), nullptr);
  EXPECT_EQ(families().size(), 6u);
}

}  // namespace
}  // namespace nss::arch

#include "arch/architecture.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace nss::arch {
namespace {

Family named(const char* name, const char* hf_architecture, const char* model_type) {
  Family family;
  family.name = name;
  family.hf_architecture = hf_architecture;
  family.model_type = model_type;
  return family;
}

std::vector<Family> make_families() {
  const std::vector<std::string> q_v = {"q_proj", "v_proj"};
  std::vector<Family> all;
  Family llama = named("llama", "LlamaForCausalLM", "llama");
  llama.attention_bias = AttentionBias::kFromConfig;
  llama.default_lora_targets = q_v;
  all.push_back(llama);

  Family qwen2 = named("qwen2", "Qwen2ForCausalLM", "qwen2");
  qwen2.attention_bias = AttentionBias::kQkv;
  qwen2.sliding_window = true;
  qwen2.sliding_layers = SlidingLayers::kAboveMaxWindow;
  qwen2.default_lora_targets = q_v;
  all.push_back(qwen2);

  Family qwen3 = named("qwen3", "Qwen3ForCausalLM", "qwen3");
  qwen3.attention_bias = AttentionBias::kFromConfig;
  qwen3.qk_norm = true;
  qwen3.sliding_window = true;
  qwen3.sliding_layers = SlidingLayers::kAboveMaxWindow;
  qwen3.default_lora_targets = q_v;
  all.push_back(qwen3);

  Family mistral = named("mistral", "MistralForCausalLM", "mistral");
  mistral.sliding_window = true;
  mistral.sliding_layers = SlidingLayers::kAll;
  mistral.default_lora_targets = q_v;
  all.push_back(mistral);

  Family smollm3 = named("smollm3", "SmolLM3ForCausalLM", "smollm3");
  smollm3.attention_bias = AttentionBias::kFromConfig;
  smollm3.sliding_window = true;
  smollm3.sliding_layers = SlidingLayers::kAboveMaxWindow;
  smollm3.no_rope_interval = 4;
  smollm3.default_lora_targets = q_v;
  all.push_back(smollm3);

  Family gemma3 = named("gemma3", "Gemma3ForCausalLM", "gemma3_text");
  gemma3.norm_scale = NormScale::kOnePlusWeight;
  gemma3.activation = Activation::kGeluTanh;
  gemma3.attention_bias = AttentionBias::kFromConfig;
  gemma3.qk_norm = true;
  gemma3.sandwich_norms = true;
  gemma3.scaled_embedding = true;
  gemma3.sliding_window = true;
  gemma3.sliding_layers = SlidingLayers::kPattern;
  gemma3.activation_key = "hidden_activation";
  gemma3.default_lora_targets = q_v;
  all.push_back(gemma3);
  return all;
}

std::string family_list() {
  std::string list;
  for (const auto& f : families()) list += (list.empty() ? "" : ", ") + f.name;
  return list;
}

Layer layer_of(const config::ModelConfig& m, const Family& family, const std::string& type,
               std::size_t index) {
  const std::string key = "model.layer_types[" + std::to_string(index) + "]";
  Layer layer;
  layer.rope_theta = m.rope_theta;
  if (type == kFullAttention) return layer;
  if (type == kFullAttentionNoRope) {
    layer.rope = false;
    return layer;
  }
  if (type != kSlidingAttention)
    throw UsageError("arch", key + " is '" + type + "'",
                     std::string("use ") + kFullAttention + ", " + kSlidingAttention + " or " +
                         kFullAttentionNoRope);
  if (!family.sliding_window)
    throw UsageError("arch",
                     key + " is " + kSlidingAttention + " but family " + family.name +
                         " has no sliding-window attention",
                     "use full_attention");
  if (m.sliding_window <= 0)
    throw UsageError("arch", key + " is " + kSlidingAttention + " but model.sliding_window is 0",
                     "set model.sliding_window to the window's length");
  layer.sliding = true;
  layer.window = m.sliding_window;
  // A separate base for the local layers comes without the global scaling (Gemma 3).
  if (m.rope_local_theta > 0) {
    layer.rope_theta = m.rope_local_theta;
    layer.rope_scaled = false;
  }
  return layer;
}

std::vector<BlockTensor> block_tensors(const config::ModelConfig& m, const Family& family) {
  const std::int64_t h = m.hidden_size, i = m.intermediate_size, d = m.head_dim;
  const std::int64_t q = m.num_attention_heads * d, kv = m.num_key_value_heads * d;
  const AttentionBiases biases = attention_biases(family, m);
  std::vector<BlockTensor> block = {{"input_layernorm.weight", TensorKind::kNorm, "", {h}}};
  const auto projection = [&](const char* module, const char* name, std::int64_t out,
                              std::int64_t in, bool bias) {
    const std::string path = std::string(module) + "." + name;
    block.push_back({path + ".weight", TensorKind::kProjection, name, {out, in}});
    if (bias) block.push_back({path + ".bias", TensorKind::kBias, name, {out}});
  };
  projection("self_attn", "q_proj", q, h, biases.qkv);
  projection("self_attn", "k_proj", kv, h, biases.qkv);
  projection("self_attn", "v_proj", kv, h, biases.qkv);
  projection("self_attn", "o_proj", h, q, biases.o);
  if (family.qk_norm) {
    block.push_back({"self_attn.q_norm.weight", TensorKind::kHeadNorm, "", {d}});
    block.push_back({"self_attn.k_norm.weight", TensorKind::kHeadNorm, "", {d}});
  }
  block.push_back({"post_attention_layernorm.weight", TensorKind::kNorm, "", {h}});
  if (family.sandwich_norms) {
    block.push_back({"pre_feedforward_layernorm.weight", TensorKind::kNorm, "", {h}});
    block.push_back({"post_feedforward_layernorm.weight", TensorKind::kNorm, "", {h}});
  }
  projection("mlp", "gate_proj", i, h, false);
  projection("mlp", "up_proj", i, h, false);
  projection("mlp", "down_proj", h, i, false);
  return block;
}

}  // namespace

const char* hf_activation_name(Activation activation) {
  return activation == Activation::kGeluTanh ? "gelu_pytorch_tanh" : "silu";
}

AttentionBiases attention_biases(const Family& family, const config::ModelConfig& model) {
  const bool configured =
      family.attention_bias == AttentionBias::kFromConfig && model.attention_bias;
  return {family.attention_bias == AttentionBias::kQkv || configured, configured};
}

const std::vector<Family>& families() {
  static const std::vector<Family> all = make_families();
  return all;
}

const Family& family(const std::string& name) {
  for (const auto& f : families())
    if (f.name == name) return f;
  throw UsageError("arch", "model.family is '" + name + "'", "use one of: " + family_list());
}

const Family* family_of_model_type(const std::string& model_type) {
  for (const auto& f : families())
    if (f.model_type == model_type) return &f;
  return nullptr;
}

Architecture describe(const config::ModelConfig& m) {
  Architecture a;
  a.family = &family(m.family);
  const auto layers = static_cast<std::size_t>(m.num_hidden_layers);
  if (!m.layer_types.empty() && m.layer_types.size() != layers)
    throw UsageError("arch",
                     "model.layer_types lists " + std::to_string(m.layer_types.size()) +
                         " layers but model.num_hidden_layers is " + std::to_string(layers),
                     "give one type per layer, or none (every layer full attention)");
  for (std::size_t l = 0; l < layers; ++l)
    a.layers.push_back(
        layer_of(m, *a.family, m.layer_types.empty() ? kFullAttention : m.layer_types[l], l));
  for (std::size_t l = 0; l < layers; ++l) {
    Layer& layer = a.layers[l];
    if (!layer.rope) continue;
    for (std::size_t e = 0; e < l && layer.rope_table < 0; ++e)
      if (a.layers[e].rope && a.layers[e].rope_theta == layer.rope_theta &&
          a.layers[e].rope_scaled == layer.rope_scaled)
        layer.rope_table = a.layers[e].rope_table;
    if (layer.rope_table < 0) layer.rope_table = a.rope_tables++;
  }
  a.block = block_tensors(m, *a.family);
  a.query_scale = 1.0 / std::sqrt(m.query_pre_attn_scalar > 0 ? m.query_pre_attn_scalar
                                                              : static_cast<double>(m.head_dim));
  a.embedding_scale =
      a.family->scaled_embedding ? std::sqrt(static_cast<double>(m.hidden_size)) : 1.0;
  return a;
}

}  // namespace nss::arch

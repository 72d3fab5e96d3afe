#include "config/model_presets.h"

namespace nss::config {
namespace {

struct Preset {
  const char* name;
  std::int64_t hidden, intermediate, layers, heads, kv_heads, head_dim, vocab, max_positions;
  double rms_norm_eps, rope_theta;
  RopeScaling rope_type;
  double rope_factor, low_freq_factor, high_freq_factor;
  std::int64_t rope_original_max_positions;
  bool tied;
  // Another family than Llama (lib/arch) and its per-layer plan:
  const char* family = "llama";
  std::int64_t sliding_window = 0;  // > 0: layers attend in a window of this many keys,
  std::int64_t global_every = 0;    // but every global_every-th (0: none) attends fully
  std::int64_t no_rope_every = 0;   // every no_rope_every-th layer without RoPE (0: none)
  double rope_local_theta = 0, query_pre_attn_scalar = 0;
};

// Shapes as published in each model's Hugging Face config.json.
constexpr Preset kPresets[] = {
    // CPU tests and the default local run: byte-level vocabulary (256 bytes + BOS + EOS).
    {"tiny", 64, 176, 2, 4, 2, 16, 258, 1024, 1e-5, 10000.0, RopeScaling::kNone, 1, 1, 4, 8192,
     false},
    // meta-llama/Llama-3.2-1B: tied embeddings, llama3 RoPE scaling x32.
    {"llama-3.2-1b", 2048, 8192, 16, 32, 8, 64, 128256, 131072, 1e-5, 500000.0,
     RopeScaling::kLlama3, 32, 1, 4, 8192, true},
    // meta-llama/Llama-3.2-3B: tied embeddings.
    {"llama-3.2-3b", 3072, 8192, 28, 24, 8, 128, 128256, 131072, 1e-5, 500000.0,
     RopeScaling::kLlama3, 32, 1, 4, 8192, true},
    // meta-llama/Llama-3.1-8B: separate LM head, llama3 RoPE scaling x8.
    {"llama-3.1-8b", 4096, 14336, 32, 32, 8, 128, 128256, 131072, 1e-5, 500000.0,
     RopeScaling::kLlama3, 8, 1, 4, 8192, false},
    // HuggingFaceTB/SmolLM2-135M, -360M, -1.7B: tied embeddings.
    {"smollm2-135m", 576, 1536, 30, 9, 3, 64, 49152, 8192, 1e-5, 100000.0, RopeScaling::kNone, 1, 1,
     4, 8192, true},
    {"smollm2-360m", 960, 2560, 32, 15, 5, 64, 49152, 8192, 1e-5, 100000.0, RopeScaling::kNone, 1,
     1, 4, 8192, true},
    {"smollm2-1.7b", 2048, 8192, 24, 32, 32, 64, 49152, 8192, 1e-5, 130000.0, RopeScaling::kNone, 1,
     1, 4, 8192, true},
    // TinyLlama/TinyLlama-1.1B: separate LM head.
    {"tinyllama-1.1b", 2048, 5632, 22, 32, 4, 64, 32000, 2048, 1e-5, 10000.0, RopeScaling::kNone, 1,
     1, 4, 8192, false},
    // Qwen/Qwen2.5-0.5B: q/k/v biases, tied embeddings (no layer slides: use_sliding_window false).
    {"qwen2.5-0.5b", 896, 4864, 24, 14, 2, 64, 151936, 32768, 1e-6, 1000000.0, RopeScaling::kNone,
     1, 1, 4, 8192, true, "qwen2"},
    // Qwen/Qwen3-0.6B: per-head q/k norms, head_dim 128 of a 1024-wide model, tied embeddings.
    {"qwen3-0.6b", 1024, 3072, 28, 16, 8, 128, 151936, 40960, 1e-6, 1000000.0, RopeScaling::kNone,
     1, 1, 4, 8192, true, "qwen3"},
    // mistralai/Mistral-7B-v0.1: every layer in a window of 4096 keys.
    {"mistral-7b-v0.1", 4096, 14336, 32, 32, 8, 128, 32000, 32768, 1e-5, 10000.0,
     RopeScaling::kNone, 1, 1, 4, 8192, false, "mistral", 4096},
    // HuggingFaceTB/SmolLM3-3B: every fourth layer without RoPE, tied embeddings.
    {"smollm3-3b",       2048, 11008, 36, 16,   4,    128,       128256, 65536, 1e-6, 5000000.0,
     RopeScaling::kNone, 1,    1,     4,  8192, true, "smollm3", 0,      0,     4},
    // google/gemma-3-1b-pt: five local layers (window 512, RoPE base 1e4) to one global.
    {"gemma3-1b", 1152,   6912,  26,      4,         1,
     256,         262144, 32768, 1e-6,    1000000.0, RopeScaling::kNone,
     1,           1,      4,     8192,    true,      "gemma3",
     512,         6,      0,     10000.0, 256},
};

// The per-layer types of a preset's rule for `layers` layers (empty: every
// layer full attention with RoPE).
std::vector<std::string> layer_types_of(const Preset& p, std::int64_t layers) {
  if (p.sliding_window == 0 && p.no_rope_every == 0) return {};
  std::vector<std::string> types;
  for (std::int64_t layer = 1; layer <= layers; ++layer) {
    const bool global = p.global_every > 0 && layer % p.global_every == 0;
    const bool no_rope = p.no_rope_every > 0 && layer % p.no_rope_every == 0;
    types.push_back(p.sliding_window > 0 && !global ? "sliding_attention"
                    : no_rope                       ? "full_attention_no_rope"
                                                    : "full_attention");
  }
  return types;
}

}  // namespace

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const auto& preset : kPresets) names.emplace_back(preset.name);
  return names;
}

std::vector<std::string> preset_layer_types(const std::string& name, std::int64_t layers) {
  for (const auto& p : kPresets)
    if (name == p.name) return layer_types_of(p, layers);
  return {};
}

bool apply_model_preset(const std::string& name, ModelConfig& model) {
  for (const auto& p : kPresets) {
    if (name != p.name) continue;
    model.preset = p.name;
    model.hidden_size = p.hidden;
    model.intermediate_size = p.intermediate;
    model.num_hidden_layers = p.layers;
    model.num_attention_heads = p.heads;
    model.num_key_value_heads = p.kv_heads;
    model.head_dim = p.head_dim;
    model.vocab_size = p.vocab;
    model.max_position_embeddings = p.max_positions;
    model.rms_norm_eps = p.rms_norm_eps;
    model.rope_theta = p.rope_theta;
    model.rope_scaling.type = p.rope_type;
    model.rope_scaling.factor = p.rope_factor;
    model.rope_scaling.low_freq_factor = p.low_freq_factor;
    model.rope_scaling.high_freq_factor = p.high_freq_factor;
    model.rope_scaling.original_max_position_embeddings = p.rope_original_max_positions;
    model.tie_word_embeddings = p.tied;
    model.family = p.family;
    model.attention_bias = false;
    model.sliding_window = p.sliding_window;
    model.layer_types = layer_types_of(p, p.layers);
    model.rope_local_theta = p.rope_local_theta;
    model.query_pre_attn_scalar = p.query_pre_attn_scalar;
    return true;
  }
  return false;
}

}  // namespace nss::config

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
};

}  // namespace

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const auto& preset : kPresets) names.emplace_back(preset.name);
  return names;
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
    return true;
  }
  return false;
}

}  // namespace nss::config

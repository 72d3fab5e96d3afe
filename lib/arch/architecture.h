// What a decoder-only model family computes, as data: one description per
// family (the norms, biases, activation, embedding and query scaling, the
// tensors of a block and their Hugging Face names, PEFT's default targets)
// and, for one model of it, the plan of its layers (full or sliding-window
// attention, RoPE or none, the RoPE base). The forward, the parameter specs
// and flat layouts, the memory model, Hugging Face import and export and the
// shape check read this and hold no per-family branch: a new family is a
// new entry of architecture.cpp's table and its tests (docs/model.md).
// Plain C++, no libtorch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/config.h"

namespace nss::arch {

/// An RMSNorm's scale: `weight`, or `1 + weight` (Gemma; its weights start at 0).
enum class NormScale { kWeight, kOnePlusWeight };

/// The MLP's gate: silu(gate) * up (SwiGLU), or gelu_tanh(gate) * up (GeGLU).
enum class Activation { kSilu, kGeluTanh };

/// Which attention projections carry a bias.
enum class AttentionBias {
  kNone,
  kQkv,         // q, k and v always (Qwen2)
  kFromConfig,  // q, k, v and o when model.attention_bias is set (Llama, Qwen3)
};

/// How a family's config.json says which layers attend in a sliding window
/// (a "layer_types" list, when present, says it for every family).
enum class SlidingLayers {
  kNone,            // no sliding-window attention
  kAll,             // "sliding_window" set (not null): every layer (Mistral)
  kAboveMaxWindow,  // "use_sliding_window" and layers from "max_window_layers" on (Qwen2, Qwen3)
  kPattern,         // every "sliding_window_pattern"-th layer global, the others sliding (Gemma 3)
};

/// What every model of a family computes.
struct Family {
  std::string name;             // "qwen3": model.family
  std::string hf_architecture;  // "Qwen3ForCausalLM"
  std::string model_type;       // config.json's "model_type"
  NormScale norm_scale = NormScale::kWeight;
  Activation activation = Activation::kSilu;
  AttentionBias attention_bias = AttentionBias::kNone;
  bool qk_norm = false;           // per-head RMSNorm of q and k before RoPE (Qwen3, Gemma 3)
  bool sandwich_norms = false;    // norms after attention and around the MLP (Gemma 3)
  bool scaled_embedding = false;  // embeddings times sqrt(hidden_size) (Gemma)
  bool sliding_window = false;    // model.sliding_window and sliding layer types mean something
  SlidingLayers sliding_layers = SlidingLayers::kNone;  // how config.json lists them
  std::string activation_key = "hidden_act";            // config.json's key naming the activation
  // > 0: config.json's "no_rope_layers" says which layers skip RoPE, by default
  // every "no_rope_layer_interval"-th (this many) layer (SmolLM3)
  std::int64_t no_rope_interval = 0;
  // PEFT's default target modules for the family (peft's
  // TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING).
  std::vector<std::string> default_lora_targets;
};

/// How one decoder layer attends.
struct Layer {
  bool sliding = false;     // keys within `window` positions of the query only
  std::int64_t window = 0;  // sliding: the query and window - 1 keys before it
  bool rope = true;         // false: no rotary embedding (SmolLM3's NoPE layers)
  double rope_theta = 0;    // this layer's RoPE base
  bool rope_scaled = true;  // model.rope_scaling applies (Gemma 3's local layers: no)
  int rope_table = -1;      // which of the model's distinct RoPE tables; -1: none
};

/// What a block tensor is: it decides its initialisation and weight decay.
enum class TensorKind { kNorm, kHeadNorm, kProjection, kBias };

/// One tensor of a decoder block, in flat-buffer order.
struct BlockTensor {
  std::string name;  // under "model.layers.N.": "self_attn.q_proj.weight"
  TensorKind kind = TensorKind::kProjection;
  std::string projection;           // kProjection and kBias: "q_proj"; LoRA targets these by name
  std::vector<std::int64_t> shape;  // Hugging Face layout ([out, in] for a projection)
};

/// One model: its family, the plan of its layers and the tensors of a block.
struct Architecture {
  const Family* family = nullptr;
  std::vector<Layer> layers;  // num_hidden_layers of them
  int rope_tables = 0;        // distinct (rope_theta, rope_scaled) among the layers with RoPE
  std::vector<BlockTensor> block;
  double query_scale = 1;      // multiplies q.k: head_dim^-1/2, or query_pre_attn_scalar^-1/2
  double embedding_scale = 1;  // the embedding's output times this
};

/// Hugging Face's name of an activation ("silu", "gelu_pytorch_tanh").
const char* hf_activation_name(Activation activation);

/// Which attention projections of `model` carry a bias: q, k and v; o.
struct AttentionBiases {
  bool qkv = false, o = false;
};
AttentionBiases attention_biases(const Family& family, const config::ModelConfig& model);

/// The family called `name`; ConfigError (exit 2) naming model.family and
/// the families there are.
const Family& family(const std::string& name);

/// The family whose config.json "model_type" is `model_type`, or nullptr.
const Family* family_of_model_type(const std::string& model_type);

/// Every family, in documentation order.
const std::vector<Family>& families();

/// The per-layer values model.layer_types takes.
inline constexpr const char* kFullAttention = "full_attention";
inline constexpr const char* kSlidingAttention = "sliding_attention";
inline constexpr const char* kFullAttentionNoRope = "full_attention_no_rope";

/// The architecture of `model`. ConfigError naming the key for what the
/// family does not have (a sliding layer in a family without windows, a
/// layer_types list of the wrong length, an unknown layer type).
Architecture describe(const config::ModelConfig& model);

}  // namespace nss::arch

// Hugging Face config.json (LlamaConfig) <-> config::ModelConfig.
//
// Reading follows transformers' LlamaConfig: absent keys take its defaults,
// rope_scaling accepts both "type" and "rope_type", head_dim and
// num_key_value_heads default to hidden_size / num_attention_heads and
// num_attention_heads. Anything this implementation would compute differently
// (another architecture, activation, attention/MLP bias, RoPE type) is a
// DataError rather than a silently different model.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "config/config.h"

namespace nss::hf {

/// The shape fields of a ModelConfig from config.json text; `origin` names
/// the file in errors (DataError, exit 4). preset and from_pretrained are left
/// at their defaults.
config::ModelConfig parse_hf_config(const std::string& json_text, const std::string& origin);

/// Reads and parses the config.json at `path`.
config::ModelConfig read_hf_config(const std::string& path);

/// config.json's special token ids by key ("bos_token_id", "eos_token_id",
/// "pad_token_id"), each as its JSON text (a number, a list or null).
using TokenIds = std::map<std::string, std::string>;

/// The token ids the config.json of `pretrained_directory` names, which an
/// export carries over (the model's class defaults differ per family); none
/// for "". A file that cannot be read or parsed gives none too, and
/// `problem` (when given) says why.
TokenIds read_token_ids(const std::string& pretrained_directory, std::string* problem = nullptr);

/// config.json text for `model` (its family's "architectures" and keys);
/// `torch_dtype` names the dtype of the weights written next to it; the
/// token ids not in `token_ids` are null.
std::string hf_config_json(const config::ModelConfig& model,
                           const std::string& torch_dtype = "float32",
                           const TokenIds& token_ids = {});

/// Shape keys on which `a` and `b` differ, as "hidden_size 64 vs 2048".
std::vector<std::string> shape_differences(const config::ModelConfig& a,
                                           const config::ModelConfig& b);

/// The shape of `configured` with every shape key taken from
/// configured.from_pretrained/config.json. Keys the YAML changed from its
/// preset (and a preset other than "tiny") must agree with config.json;
/// otherwise UsageError (exit 2) naming each conflict. Floating keys agree
/// within a relative 1e-6; the file's values are returned. from_pretrained
/// becomes the absolute directory it names (hub_cache.h: a local directory,
/// else the snapshot of an Org/Name[@revision] in the Hugging Face cache), so
/// that every reader sees the same files and the checkpoint
/// (state.lora_base.path) and an exported adapter (base_model_name_or_path)
/// name the directory from anywhere.
config::ModelConfig resolve_pretrained_shape(const config::ModelConfig& configured);

}  // namespace nss::hf

// File names of Hugging Face weights in a model directory.
#pragma once

#include <string>

namespace nss::hf {

/// Unsharded weights.
inline constexpr const char* kWeightsFile = "model.safetensors";
/// Index of sharded weights: {"metadata": {"total_size"}, "weight_map": {tensor: file}}.
inline constexpr const char* kWeightsIndexFile = "model.safetensors.index.json";
/// Model configuration.
inline constexpr const char* kConfigFile = "config.json";

/// "model-0000X-of-0000Y.safetensors" for shard `index` (1-based) of `count`.
std::string shard_file_name(int index, int count);

/// True for kWeightsFile, kWeightsIndexFile and shard file names.
bool is_weights_file_name(const std::string& name);

}  // namespace nss::hf

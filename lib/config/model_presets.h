// Published model shapes by name (model.preset). Plain numbers: the shapes are
// configuration, so they live here rather than with the libtorch model.
#pragma once

#include <string>
#include <vector>

#include "config/config.h"

namespace nss::config {

/// Names of every preset, in documentation order.
std::vector<std::string> preset_names();

/// Overwrites the shape fields of `model` with the preset's; false if unknown.
bool apply_model_preset(const std::string& name, ModelConfig& model);

/// The per-layer types the preset's rule gives `layers` layers (Gemma 3: every
/// sixth global; SmolLM3: every fourth without RoPE); empty when every layer
/// is full attention with RoPE or the preset is unknown.
std::vector<std::string> preset_layer_types(const std::string& name, std::int64_t layers);

}  // namespace nss::config

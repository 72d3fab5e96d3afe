// What of a family's description (lib/arch) the forward computes today.
// A model that needs more is refused before anything is built or trained,
// naming the feature: never a silent approximation.
#pragma once

#include "config/config.h"

namespace nss::model {

/// Throws DataError (exit 4) naming the family and each feature of `model`'s
/// architecture that llama_functional's forward does not compute.
void require_forward_support(const config::ModelConfig& model);

}  // namespace nss::model

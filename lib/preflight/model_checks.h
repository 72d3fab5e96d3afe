// The model a run starts from, checked before the verdict so that a go is
// never followed by a structural loading failure.
#pragma once

#include "preflight/check.h"
#include "preflight/context.h"

namespace nss::preflight {

/// `model.pretrained` (exit 4): with model.from_pretrained, the directory,
/// config.json, every weight file's header against its size, and every base
/// tensor's presence, shape and dtype (model::open_pretrained_base; values
/// are checked by each rank as it loads its slices). The message names the
/// directory, and for a model from the Hugging Face cache its id, ref and
/// cache (hf::describe_model_directory). A pass without it.
Check check_pretrained_model(const PreflightContext& context);

}  // namespace nss::preflight

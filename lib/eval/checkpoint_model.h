// The unsharded model of a committed checkpoint step (nss_eval STEP_DIR):
// the trained tensors read and verified from the shards, the frozen LoRA base
// (if any) from its pretrained files or its initialisation seed, the shape
// from the resolved configuration stored in metadata.json.
#pragma once

#include <string>

#include "eval/quantize_request.h"
#include "model/llama_model.h"

namespace nss::eval {

/// Loads step `step_dir` as a LlamaModel created with `options` (dtype and
/// device; trained tensors are read as float32 and converted); CheckpointError (exit 5)
/// when the step is not committed, fails a checksum or lacks its configuration,
/// DataError (exit 4) when a value it holds (or its LoRA base holds) is not finite.
/// `quantize`: the base's values (eval/quantize_request.h; default: as the run trained).
model::LlamaModel load_checkpoint_model(
    const std::string& step_dir,
    torch::TensorOptions options = torch::TensorOptions().dtype(torch::kFloat32),
    const QuantizeRequest& quantize = {});

}  // namespace nss::eval

// safetensors and Hugging Face outputs of nss_consolidate:
//   full model   model tensors (no optimizer state) under their HF names;
//                hf: config.json (LlamaForCausalLM) + model.safetensors, sharded
//                with model.safetensors.index.json above --max-shard-size
//   LoRA adapter PEFT's adapter_model.safetensors ("base_model.model." prefix);
//                hf: plus adapter_config.json
//   merged LoRA  (--merge-lora) every base weight, W + (alpha/r) B A where adapted
// An hf directory of a run started from a pretrained directory also holds that
// directory's tokenizer files (hf/tokenizer_files.h); one it cannot copy is a warning.
// Every file is written under a temporary name and renamed when complete; an hf
// directory appears under its final name only when every file in it is done.
#pragma once

#include <cstdint>

#include "checkpoint/checkpoint_reader.h"
#include "checkpoint/consolidate.h"

namespace nss::checkpoint {

/// PEFT's key prefix for adapter weights.
inline constexpr const char* kPeftPrefix = "base_model.model.";

/// Writes the output for options.format "safetensors" or "hf"; returns the
/// number of tensors written.
std::uint64_t export_hf(CheckpointReader& reader, const ConsolidateOptions& options);

}  // namespace nss::checkpoint

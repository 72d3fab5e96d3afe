// The Llama model's FSDP units as flat layouts: which parameters each unit
// flattens (trainable and frozen), which of them AdamW decays, and the
// unit's name in messages. Plain C++: the sharded model, the preflight's
// memory model and the sharded training state all build their layouts here.
#pragma once

#include <string>
#include <vector>

#include "arch/tensor_parallel.h"
#include "config/config.h"
#include "layout/flat_layout.h"
#include "model/param_spec.h"

namespace nss::model {

/// Whether AdamW's weight decay applies: projections and LoRA adapters; the
/// embedding (and so a tied head) only with `decay_embeddings`; never norms.
bool weight_decayed(ParamRole role, bool decay_embeddings);

/// Unit `unit`'s flat layout at `world_size` ranks (unit_parameters order);
/// with `tensor_parallel` each parameter's part on a tensor rank.
layout::FlatLayout unit_layout(const config::ModelConfig& model, const config::LoraConfig& lora,
                               bool decay_embeddings, int unit, int world_size,
                               const arch::TensorParallelPlan* tensor_parallel = nullptr);

/// The tensor-parallel plan of the configured model (parallel.tensor_parallel_size;
/// UsageError, exit 2, for a size the model does not divide into).
arch::TensorParallelPlan tensor_parallel_plan(const config::Config& config);

/// Every unit's layout for the configured model in a job of `world_size`
/// ranks: each tensor rank's parts (parallel.tensor_parallel_size) sharded
/// over its shard group (parallel.shard_group_size ranks under hybrid
/// sharding, else all the ranks of that tensor rank).
std::vector<layout::FlatLayout> unit_layouts(const config::Config& config, int world_size);

/// "unit 0 (embedding)", "unit 3 (block 2)", "unit 5 (head)".
std::string unit_label(int unit, int units);

}  // namespace nss::model

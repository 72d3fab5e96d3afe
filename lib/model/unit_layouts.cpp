#include "model/unit_layouts.h"

#include <optional>

#include "config/derived.h"
#include "model/tensor_parallel_params.h"

namespace nss::model {

bool weight_decayed(ParamRole role, bool decay_embeddings) {
  switch (role) {
    case ParamRole::kLinear:
    case ParamRole::kLoraA:
    case ParamRole::kLoraB:
      return true;
    case ParamRole::kEmbedding:
      return decay_embeddings;
    case ParamRole::kNorm:
    case ParamRole::kBias:
      return false;
  }
  return false;
}

layout::FlatLayout unit_layout(const config::ModelConfig& model, const config::LoraConfig& lora,
                               bool decay_embeddings, int unit, int world_size,
                               const arch::TensorParallelPlan* tensor_parallel) {
  std::vector<layout::FlatParam> params;
  for (const auto& spec : unit_parameters(model, lora, unit))
    params.push_back(
        {spec.name,
         tensor_parallel ? parameter_placement(*tensor_parallel, spec).shard_shape : spec.shape,
         spec.trainable, weight_decayed(spec.role, decay_embeddings), spec.quantized});
  return layout::FlatLayout(std::move(params), world_size);
}

arch::TensorParallelPlan tensor_parallel_plan(const config::Config& config) {
  return arch::tensor_parallel_plan(arch::describe(config.model), config.model,
                                    static_cast<int>(config.parallel.tensor_parallel_size));
}

std::vector<layout::FlatLayout> unit_layouts(const config::Config& config, int world_size) {
  std::vector<layout::FlatLayout> layouts;
  const int shard_ranks = config::shard_group_ranks(config.parallel, world_size);
  std::optional<arch::TensorParallelPlan> plan;
  if (config.parallel.tensor_parallel_size > 1) plan = tensor_parallel_plan(config);
  for (int u = 0; u < num_units(config.model); ++u)
    layouts.push_back(unit_layout(config.model, config.training.lora,
                                  config.training.weight_decay_embeddings, u, shard_ranks,
                                  plan ? &*plan : nullptr));
  return layouts;
}

std::string unit_label(int unit, int units) {
  if (unit == 0) return "unit 0 (embedding)";
  if (unit == units - 1) return "unit " + std::to_string(unit) + " (head)";
  return "unit " + std::to_string(unit) + " (block " + std::to_string(unit - 1) + ")";
}

}  // namespace nss::model

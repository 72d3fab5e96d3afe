#include "model/tensor_parallel_params.h"

#include <algorithm>
#include <string>

#include "core/error.h"

namespace nss::model {
namespace {

constexpr const char* kLayerPrefix = "model.layers.";

// "model.layers.3.self_attn.q_proj.weight" -> "self_attn.q_proj.weight".
std::string block_tensor_name(const std::string& name) {
  const std::size_t dot = name.find('.', std::string(kLayerPrefix).size());
  NSS_ASSERT(name.rfind(kLayerPrefix, 0) == 0 && dot != std::string::npos, "model",
             "not a decoder block's parameter: " + name);
  return name.substr(dot + 1);
}

// "self_attn.q_proj.lora_A.weight" -> "q_proj".
std::string adapted_projection(const std::string& tensor) {
  const std::size_t lora = tensor.find(".lora_");
  const std::size_t dot = tensor.rfind('.', lora - 1);
  return tensor.substr(dot + 1, lora - dot - 1);
}

}  // namespace

arch::TensorPlacement parameter_placement(const arch::TensorParallelPlan& plan,
                                          const ParamSpec& spec) {
  if (spec.name == plan.embedding.name) return plan.embedding;
  if (spec.name == plan.head.name) return plan.head;
  if (spec.name.rfind(kLayerPrefix, 0) != 0)
    return {spec.name, arch::TensorSplit::kWhole, spec.shape, spec.shape};
  const std::string tensor = block_tensor_name(spec.name);
  if (spec.is_adapter())
    return arch::adapter_placement(plan, adapted_projection(tensor), spec.role == ParamRole::kLoraA,
                                   spec.name, spec.shape);
  for (const arch::TensorPlacement& placement : plan.block)
    if (placement.name == tensor) {
      arch::TensorPlacement placed = placement;
      placed.name = spec.name;
      return placed;
    }
  throw InternalError("model", "no tensor-parallel placement for " + spec.name);
}

std::int64_t first_whole_row(const arch::TensorParallelPlan& plan,
                             const arch::TensorPlacement& placement, int rank) {
  switch (placement.split) {
    case arch::TensorSplit::kRows:
      return rank * placement.shard_shape.front();
    case arch::TensorSplit::kHeadGroups:
      return arch::first_kv_head(plan, rank) * plan.head_dim;
    case arch::TensorSplit::kWhole:
    case arch::TensorSplit::kColumns:
      break;
  }
  return 0;
}

int tensor_copies(const arch::TensorParallelPlan& plan, const arch::TensorPlacement& placement) {
  switch (placement.split) {
    case arch::TensorSplit::kWhole:
      return plan.size;
    case arch::TensorSplit::kHeadGroups:
      return static_cast<int>(plan.kv_replicas);
    case arch::TensorSplit::kRows:
    case arch::TensorSplit::kColumns:
      break;
  }
  return 1;
}

void for_each_whole_run(const arch::TensorParallelPlan& plan,
                        const arch::TensorPlacement& placement,
                        const std::vector<std::int64_t>& whole_shape, int rank, std::int64_t offset,
                        std::int64_t count,
                        const std::function<void(std::int64_t, std::int64_t, std::int64_t)>& run) {
  std::int64_t whole_numel = 1;
  for (std::int64_t d : whole_shape) whole_numel *= d;
  const std::vector<std::int64_t>& part = placement.shard_shape;
  const std::int64_t columns = part.size() > 1 ? part[1] : 1;
  if (placement.split == arch::TensorSplit::kColumns) {
    // One run per row of the part: its columns sit at rank * columns of the row.
    const std::int64_t whole_columns = whole_shape[1];
    for (std::int64_t i = offset; i < offset + count;) {
      const std::int64_t row = i / columns, column = i % columns;
      const std::int64_t length = std::min(columns - column, offset + count - i);
      run(row * whole_columns + rank * columns + column, length, i);
      i += length;
    }
    return;
  }
  // Whole tensors and row splits are one run, moved by the part's first row.
  const std::int64_t begin = first_whole_row(plan, placement, rank) * columns + offset;
  const std::int64_t length = std::min(count, whole_numel - begin);
  if (length > 0) run(begin, length, offset);
}

}  // namespace nss::model

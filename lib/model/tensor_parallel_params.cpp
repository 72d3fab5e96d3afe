#include "model/tensor_parallel_params.h"

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

}  // namespace nss::model

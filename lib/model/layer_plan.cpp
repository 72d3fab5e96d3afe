#include "model/layer_plan.h"

#include <string>

#include "arch/architecture.h"
#include "core/error.h"

namespace nss::model {

LayerPlans::LayerPlans(const config::ModelConfig& model, std::int64_t max_positions,
                       torch::Device device)
    : architecture_(arch::describe(model)) {
  tables_.reserve(static_cast<std::size_t>(architecture_.rope_tables));
  for (const arch::Layer& layer : architecture_.layers) {
    if (layer.rope_table == static_cast<int>(tables_.size()))
      tables_.emplace_back(model, max_positions, device,
                           RopeBase{layer.rope_theta, layer.rope_scaled});
  }
}

LayerPlan LayerPlans::operator[](int layer) const {
  NSS_ASSERT(layer >= 0 && layer < size(), "model",
             "layer " + std::to_string(layer) + " of " + std::to_string(size()));
  const arch::Layer& planned = architecture_.layers[static_cast<std::size_t>(layer)];
  return {planned.rope_table < 0 ? nullptr : &tables_[static_cast<std::size_t>(planned.rope_table)],
          planned.sliding ? planned.window : 0, &architecture_, tensor_parallel_};
}

}  // namespace nss::model

#include "model/initial_weights.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "hf/hf_config.h"
#include "model/counter_rng.h"

namespace nss::model {

void init_parameter_slice(const ParamSpec& spec, const config::ModelConfig& /*model*/,
                          std::uint64_t seed, std::int64_t offset, std::int64_t count, float* out) {
  NSS_ASSERT(offset >= 0 && count >= 0 && offset + count <= spec.numel(), "model",
             "element range outside '" + spec.name + "'");
  switch (spec.role) {
    case ParamRole::kNorm:
      std::fill(out, out + count, 1.0f);
      return;
    case ParamRole::kLoraB:
      std::fill(out, out + count, 0.0f);
      return;
    case ParamRole::kEmbedding:
    case ParamRole::kLinear:
      fill_normal(stream_key(seed, spec.name), offset, count, 0.0f, kInitStddev, out);
      return;
    case ParamRole::kLoraA: {
      // kaiming_uniform_(a=sqrt(5)): gain sqrt(2 / (1 + 5)), bound gain * sqrt(3 / fan_in).
      const float bound = 1.0f / std::sqrt(static_cast<float>(spec.shape.at(1)));
      fill_uniform(stream_key(seed, spec.name), offset, count, -bound, bound, out);
      return;
    }
  }
}

InitialWeights::InitialWeights(const config::ModelConfig& model, const config::LoraConfig& lora,
                               std::uint64_t seed)
    : model_(model), seed_(seed) {
  if (model.from_pretrained.empty()) return;
  pretrained_ = hf::PretrainedDirectory::open(model.from_pretrained);
  const auto differences = hf::shape_differences(model, pretrained_->config());
  if (!differences.empty()) {
    std::string list;
    for (const auto& difference : differences) list += (list.empty() ? "" : ", ") + difference;
    throw DataError("model",
                    "the model shape differs from " + model.from_pretrained +
                        "/config.json (configured vs file: " + list + ")",
                    "with model.from_pretrained, config.json defines the shape: do not change "
                    "config.json while a run uses it, and remove the model shape keys that "
                    "differ from it");
  }
  for (const auto& spec : all_parameters(model, lora))
    if (spec.role != ParamRole::kLoraA && spec.role != ParamRole::kLoraB)
      pretrained_->require_tensor(spec.name, spec.shape);
}

void InitialWeights::fill(const ParamSpec& spec, std::int64_t offset, std::int64_t count,
                          float* out) const {
  const bool adapter = spec.role == ParamRole::kLoraA || spec.role == ParamRole::kLoraB;
  if (pretrained_ && !adapter)
    pretrained_->read_float32(spec.name, offset, count, out);
  else
    init_parameter_slice(spec, model_, seed_, offset, count, out);
}

}  // namespace nss::model

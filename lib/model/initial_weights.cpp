#include "model/initial_weights.h"

#include <algorithm>
#include <cmath>

#include "arch/architecture.h"
#include "core/error.h"
#include "model/counter_rng.h"
#include "model/pretrained_base.h"

namespace nss::model {

void init_parameter_slice(const ParamSpec& spec, const config::ModelConfig& model,
                          std::uint64_t seed, std::int64_t offset, std::int64_t count, float* out) {
  NSS_ASSERT(offset >= 0 && count >= 0 && offset + count <= spec.numel(), "model",
             "element range outside '" + spec.name + "'");
  switch (spec.role) {
    case ParamRole::kNorm:
      // A (1 + weight) norm starts at weight 0, as transformers initialises Gemma's.
      std::fill(
          out, out + count,
          arch::family(model.family).norm_scale == arch::NormScale::kOnePlusWeight ? 0.0f : 1.0f);
      return;
    case ParamRole::kBias:
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
  pretrained_ = open_pretrained_base(model, lora);
}

void InitialWeights::fill(const ParamSpec& spec, std::int64_t offset, std::int64_t count,
                          float* out) const {
  // The preflight reads no values (that would read every byte twice): each
  // rank's read checks the slices it loads (hf::SafetensorsFile::read_float32).
  if (pretrained_ && !spec.is_adapter())
    pretrained_->read_float32(spec.name, offset, count, out);
  else
    init_parameter_slice(spec, model_, seed_, offset, count, out);
}

}  // namespace nss::model

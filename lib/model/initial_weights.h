// Where every parameter's first values come from, element range by element
// range, so each rank materialises only what it owns: deterministic random
// initialisation from (seed, parameter name), or a pretrained Hugging Face
// directory (model.from_pretrained) for the base weights. Plain C++.
#pragma once

#include <cstdint>
#include <memory>

#include "config/config.h"
#include "hf/pretrained_directory.h"
#include "model/param_spec.h"

namespace nss::model {

/// Standard deviation of linear and embedding weights (transformers' initializer_range).
constexpr float kInitStddev = 0.02f;

/// Deterministic initial values of elements [offset, offset + count) of the
/// parameter's row-major flattening, from (seed, parameter name) only, so any
/// slice equals the same range of the whole: normal(0, 0.02) for embeddings
/// and linear weights, ones for norms, LoRA A kaiming-uniform(a = sqrt(5))
/// like PEFT (uniform in +-1/sqrt(in_features)), LoRA B zeros.
void init_parameter_slice(const ParamSpec& spec, const config::ModelConfig& model,
                          std::uint64_t seed, std::int64_t offset, std::int64_t count, float* out);

class InitialWeights {
 public:
  /// Random initialisation from `seed`; when model.from_pretrained is set, the
  /// base weights come from that directory instead (LoRA adapters are always
  /// initialised), opened by open_pretrained_base (DataError, exit 4).
  InitialWeights(const config::ModelConfig& model, const config::LoraConfig& lora,
                 std::uint64_t seed);

  /// Values of elements [offset, offset + count) of `spec` as float32.
  void fill(const ParamSpec& spec, std::int64_t offset, std::int64_t count, float* out) const;

  /// The pretrained directory, or nullptr for random initialisation.
  const hf::PretrainedDirectory* pretrained() const { return pretrained_.get(); }
  const config::ModelConfig& model() const { return model_; }
  std::uint64_t seed() const { return seed_; }

 private:
  config::ModelConfig model_;
  std::uint64_t seed_;
  std::shared_ptr<const hf::PretrainedDirectory> pretrained_;
};

}  // namespace nss::model

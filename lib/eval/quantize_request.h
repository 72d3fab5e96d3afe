// --quantize of nss_eval and nss_generate: score and sample a model with the
// base a QLoRA run computed with. One place turns the request and what a
// checkpoint step says of its run into the values the model is loaded with.
#pragma once

#include <string>

#include "config/choices.h"
#include "config/config.h"
#include "model/llama_model.h"

namespace nss::eval {

/// --quantize. auto: a step as its run trained it (NF4 for a QLoRA step),
/// any other model as read; none: as read; nf4: the projections round-tripped.
enum class QuantizeMode { kAuto, kNone, kNf4 };

struct QuantizeRequest {
  QuantizeMode mode = QuantizeMode::kAuto;
  /// With nf4: double quantisation (a step's own setting applies anyway).
  bool double_quant = false;
};

/// UsageError (exit 2) for --double-quant with --quantize none.
void check_quantize_request(const QuantizeRequest& request);

/// The base quantisation to load with; `trained`: the LoRA settings of the
/// step's run (nullptr for a Hugging Face or PEFT directory).
model::BaseQuantization resolve_quantization(const QuantizeRequest& request,
                                             const config::LoraConfig* trained);

/// "NF4", "NF4 with double quantisation" or "unquantised", for logs.
std::string describe(const model::BaseQuantization& quantization);

}  // namespace nss::eval

namespace nss::config {
template <>
struct ChoiceNames<eval::QuantizeMode> {
  static constexpr std::array<std::pair<eval::QuantizeMode, const char*>, 3> names{
      {{eval::QuantizeMode::kAuto, "auto"},
       {eval::QuantizeMode::kNone, "none"},
       {eval::QuantizeMode::kNf4, "nf4"}}};
};
}  // namespace nss::config

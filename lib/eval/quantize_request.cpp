#include "eval/quantize_request.h"

#include "core/error.h"

namespace nss::eval {

void check_quantize_request(const QuantizeRequest& request) {
  if (request.double_quant && request.mode == QuantizeMode::kNone)
    throw UsageError("eval", "--double-quant applies to an NF4 base, and --quantize is none",
                     "drop --double-quant, or use --quantize nf4");
}

model::BaseQuantization resolve_quantization(const QuantizeRequest& request,
                                             const config::LoraConfig* trained) {
  const model::BaseQuantization as_trained =
      trained ? model::base_quantization(*trained) : model::BaseQuantization{};
  if (request.mode == QuantizeMode::kNone) return {};
  if (request.mode == QuantizeMode::kNf4)
    return {true, request.double_quant || (as_trained.nf4 && as_trained.double_quant)};
  if (request.double_quant && !as_trained.nf4)  // auto on an unquantised model
    return {true, true};
  return as_trained;
}

std::string describe(const model::BaseQuantization& quantization) {
  if (!quantization.nf4) return "unquantised";
  return quantization.double_quant ? "NF4 with double quantisation" : "NF4";
}

}  // namespace nss::eval

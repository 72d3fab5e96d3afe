#include "preflight/model_checks.h"

#include "core/units.h"
#include "hf/hub_cache.h"
#include "model/pretrained_base.h"

namespace nss::preflight {

Check check_pretrained_model(const PreflightContext& context) {
  constexpr const char* kId = "model.pretrained";
  const config::Config& config = context.config;
  // Initialised weights have nothing to load: the start is sound by construction.
  if (config.model.from_pretrained.empty())
    return Check::pass(kId, ExitCode::kData,
                       "model.from_pretrained is not set: the weights are initialised from "
                       "run.seed");
  // A structural problem throws DataError, which the stage reports as this
  // check's failure with the file and tensor named.
  const auto directory = model::open_pretrained_base(config.model, config.training.lora);
  std::uint64_t bytes = 0;
  for (const auto& name : directory->tensor_names())
    bytes += directory->find(name)->end - directory->find(name)->begin;
  return Check::pass(kId, ExitCode::kData,
                     hf::describe_model_directory(config.model.from_pretrained) +
                         ": config.json, " + std::to_string(directory->weight_files().size()) +
                         " weight file(s), " + std::to_string(directory->tensor_names().size()) +
                         " tensors (" + format_bytes(bytes) +
                         "), every base tensor present with its shape");
}

}  // namespace nss::preflight

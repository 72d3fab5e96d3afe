#include "preflight/model_checks.h"

#include <optional>
#include <string>

#include "core/units.h"
#include "hf/hub_cache.h"
#include "model/pretrained_base.h"

namespace nss::preflight {
namespace {

// The first rank whose node cannot read the base's config.json, and how many cannot.
std::optional<Check> unreadable_on_a_rank(const PreflightContext& context, const char* id) {
  const RankFacts* first = nullptr;
  int failures = 0;
  for (const auto& facts : context.ranks)
    if (facts.model_config && !facts.model_config->readable) {
      ++failures;
      if (!first) first = &facts;
    }
  if (!first) return std::nullopt;
  std::string message = rank_label(*first) + ": model.from_pretrained " +
                        first->model_config->path + " " + first->model_config->problem;
  if (failures > 1)
    message +=
        " (and on " + std::to_string(failures - 1) + " more rank" + (failures > 2 ? "s" : "") + ")";
  return Check::fail(id, ExitCode::kData, message,
                     "every rank reads the base from the same path: put it on a filesystem all "
                     "nodes share, or download it into the same cache on every node "
                     "(HF_HUB_CACHE=... huggingface-cli download Org/Name)");
}

}  // namespace

Check check_pretrained_model(const PreflightContext& context) {
  constexpr const char* kId = "model.pretrained";
  const config::Config& config = context.config;
  // Initialised weights have nothing to load: the start is sound by construction.
  if (config.model.from_pretrained.empty())
    return Check::pass(kId, ExitCode::kData,
                       "model.from_pretrained is not set: the weights are initialised from "
                       "run.seed");
  if (auto unreadable = unreadable_on_a_rank(context, kId)) return std::move(*unreadable);
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

#include "model/pretrained_base.h"

#include "core/error.h"
#include "hf/hf_config.h"
#include "model/param_spec.h"

namespace nss::model {

std::shared_ptr<const hf::PretrainedDirectory> open_pretrained_base(
    const config::ModelConfig& model, const config::LoraConfig& lora) {
  auto directory = hf::PretrainedDirectory::open(model.from_pretrained);
  const auto differences = hf::shape_differences(model, directory->config());
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
    if (!spec.is_adapter()) directory->require_tensor(spec.name, spec.shape);
  return directory;
}

}  // namespace nss::model

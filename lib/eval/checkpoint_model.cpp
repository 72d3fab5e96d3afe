#include "eval/checkpoint_model.h"

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "checkpoint/checkpoint_reader.h"
#include "checkpoint/committed_step.h"
#include "checkpoint/finite_reads.h"
#include "checkpoint/trained_model.h"
#include "core/error.h"
#include "model/initial_weights.h"

namespace nss::eval {

model::LlamaModel load_checkpoint_model(const std::string& step_dir, torch::TensorOptions options,
                                        const QuantizeRequest& quantize) {
  checkpoint::require_committed_step(step_dir);
  checkpoint::CheckpointReader reader(step_dir);
  const checkpoint::TrainedModel trained = checkpoint::trained_model(reader.index(), step_dir);
  if (!trained.config)
    throw CheckpointError("eval", step_dir + "/metadata.json has no state.config",
                          "this step was not written by nss_hpc; consolidate it with "
                          "nss_consolidate --format hf and pass that directory");
  const config::Config& config = *trained.config;
  // Every weight of a fully fine-tuned step is read from its shards: there is
  // no frozen base whose values --quantize could choose.
  if (!config.training.lora.enabled &&
      (quantize.mode == QuantizeMode::kNf4 || quantize.double_quant))
    throw UsageError(
        "eval",
        std::string(quantize.double_quant ? "--double-quant" : "--quantize nf4") +
            " applies to the frozen base of a LoRA step, and " + step_dir +
            " was fully fine-tuned (every weight is trained and read as saved)",
        "drop it to score the step as it was trained, or export the step with nss_consolidate "
        "--format hf and pass that directory with --quantize nf4");
  model::LlamaModel model(config.model, config.training.lora, options);
  // The frozen base first (pretrained files or the run's seed), then every
  // trained tensor from the shards.
  const model::BaseQuantization quantization =
      resolve_quantization(quantize, &config.training.lora);
  model.load(model::InitialWeights(config.model, config.training.lora,
                                   static_cast<std::uint64_t>(config.run.seed)),
             quantization);
  if (quantization.nf4 || model::base_quantization(config.training.lora).nf4)
    spdlog::info("[eval] {}: the base's projections {} (the run trained on {})", step_dir,
                 quantization.nf4 ? "round-tripped through " + describe(quantization)
                                  : "as read, unquantised",
                 describe(model::base_quantization(config.training.lora)));
  torch::NoGradGuard no_grad;
  std::size_t read = 0;
  for (int u = 0; u < model.num_units(); ++u) {
    for (std::size_t i = 0; i < model.unit_specs(u).size(); ++i) {
      const auto& spec = model.unit_specs(u)[i];
      if (!spec.trainable) continue;
      torch::Tensor tensor = model.unit_tensors(u)[i];
      // Read as stored (float32, on the host), then converted where the model lives.
      const bool direct = tensor.dtype() == torch::kFloat32 && tensor.device().is_cpu();
      torch::Tensor host = direct ? tensor : torch::empty(tensor.sizes(), torch::kFloat32);
      checkpoint::read_finite(reader, spec.name, 0, static_cast<std::uint64_t>(host.numel()),
                              host.data_ptr());
      if (!direct) tensor.copy_(host);
      ++read;
    }
  }
  spdlog::info("[eval] {}: step {}, {} trained tensors read and verified", step_dir,
               reader.index().step, read);
  return model;
}

}  // namespace nss::eval

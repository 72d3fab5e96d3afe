#include "train/private_step.h"

#include <cmath>
#include <vector>

#include <torch/torch.h>

#include "core/error.h"
#include "fsdp/per_example_gradients.h"
#include "model/param_spec.h"
#include "model/tensor_parallel_params.h"
#include "optim/grad_clip.h"
#include "privacy/private_noise.h"

namespace nss::train {
namespace {

// Per-token weights that make a row's loss the mean over its targets, so the
// unit of clipping is the example; a row without targets (padding) weighs 0.
torch::Tensor per_example_weights(const torch::Tensor& target_mask) {
  const torch::Tensor targets = target_mask.sum(1, /*keepdim=*/true);
  return target_mask / targets.clamp_min(1);
}

// Attaches the clipping to every unit for the lifetime of one step.
class PerExampleMode {
 public:
  PerExampleMode(ShardedLlama& model, fsdp::PerExampleGradients& sink) : model_(model) {
    for (auto& unit : model_.units()) unit->set_per_example(&sink);
  }
  ~PerExampleMode() {
    for (auto& unit : model_.units()) unit->set_per_example(nullptr);
  }
  PerExampleMode(const PerExampleMode&) = delete;
  PerExampleMode& operator=(const PerExampleMode&) = delete;

 private:
  ShardedLlama& model_;
};

// The noise of `length` elements of `param` from element `offset` of this
// rank's part: keyed by the whole tensor's elements (model/tensor_parallel_params.h),
// so a tensor-parallel run draws the noise of the run without it.
void part_noise(const ShardedLlama& model, const model::ParamSpec& spec,
                const PrivateStepSettings& settings, double stddev, std::int64_t offset,
                std::int64_t length, float* out) {
  const auto draw = [&](std::int64_t whole, std::int64_t count, float* into) {
    privacy::private_noise(*settings.noise_key, spec.name,
                           static_cast<std::uint64_t>(settings.step), whole, count, stddev, into);
  };
  const model::TensorParallel* tp = model.tensor_parallel();
  if (!tp) return draw(offset, length, out);
  model::for_each_whole_run(*tp->plan, model::parameter_placement(*tp->plan, spec), spec.shape,
                            tp->rank(), offset, length,
                            [&](std::int64_t whole, std::int64_t count, std::int64_t part) {
                              draw(whole, count, out + (part - offset));
                            });
}

// Adds N(0, stddev^2) to the elements of each unit's gradient shard this rank
// owns (padding gets none), then divides by the expected batch. Under hybrid
// sharding this runs after the replicas' sum, and every replica of a shard
// draws the same noise: it is keyed by the elements, not by the rank.
void noise_and_scale(ShardedLlama& model, const PrivateStepSettings& settings) {
  torch::NoGradGuard no_grad;
  const double stddev = settings.noise_multiplier * settings.max_grad_norm;
  for (std::size_t u = 0; u < model.units().size(); ++u) {
    fsdp::ShardedUnit& unit = *model.units()[u];
    torch::Tensor& grad = unit.gradient_leaf().mutable_grad();
    if (!grad.defined() || grad.numel() == 0) continue;
    if (stddev > 0) {
      const auto specs = model::unit_parameters(model.model(), model.lora(), static_cast<int>(u));
      torch::Tensor noise = torch::zeros({grad.numel()}, torch::kFloat32);
      float* out = noise.data_ptr<float>();
      for (const auto& piece : unit.layout().shard_pieces(true, unit.comm().rank()))
        part_noise(model, specs[piece.param], settings, stddev, piece.tensor_offset, piece.length,
                   out + piece.shard_offset);
      grad.add_(noise.to(grad.device()));
    }
    grad.div_(settings.expected_batch);
  }
}

}  // namespace

StepOutcome private_gradients(
    ShardedLlama& model, ShardedState& state, const PrivateStepSettings& settings,
    const std::function<MicroBatchTensors(std::int64_t)>& next_micro_batch, StepComms comms) {
  comm::Communicator& comm = comms.world;
  NSS_ASSERT(settings.noise_multiplier == 0 || settings.noise_key != nullptr, "train",
             "DP-SGD noise needs the run's secret key");
  NSS_ASSERT(settings.expected_batch > 0, "train", "the expected batch size must be positive");
  StepOutcome outcome;
  outcome.lr = settings.lr;
  fsdp::PerExampleGradients clipping(settings.max_grad_norm);
  if (const model::TensorParallel* tp = model.tensor_parallel())
    clipping.sum_norms_over(tp->group, model.per_example_norm_weights());
  // [loss sum, examples, target tokens], summed on the device and read once
  // (reading each micro-step would make the host wait for the device).
  torch::Tensor local_totals;
  {
    PerExampleMode mode(model, clipping);
    for (std::int64_t micro = 0; micro < settings.micro_steps; ++micro) {
      MicroBatchTensors batch = next_micro_batch(micro);
      const auto documents = document_mask_of(batch, model.plan().packed_attention);
      torch::Tensor loss =
          model.loss(batch.inputs, batch.targets, per_example_weights(batch.target_mask),
                     &batch.randomness, documents ? &*documents : nullptr);
      loss.backward();
      clipping.clip();
      const torch::Tensor totals =
          torch::stack({loss.detach().to(torch::kFloat64),
                        batch.target_mask.sum(1).gt(0).sum().to(torch::kFloat64),
                        batch.target_mask.sum().to(torch::kFloat64)});
      local_totals = local_totals.defined() ? local_totals + totals : totals;
    }
    model.finish_collectives();
  }
  std::vector<fsdp::ShardedUnit*> units;
  for (auto& unit : model.units()) units.push_back(unit.get());
  clipping.reduce(units);
  const torch::Tensor host_totals = local_totals.cpu().contiguous();
  double totals[3] = {host_totals[0].item<double>(), host_totals[1].item<double>(),
                      host_totals[2].item<double>()};
  {
    comm::CollectiveLabel label(comm, "loss and examples");
    comm.all_reduce(totals, 3, comm::ReduceOp::kSum);
    for (double& total : totals) total /= comms.tensor_ranks;  // a tensor group's copies
  }
  outcome.loss = totals[1] > 0 ? totals[0] / totals[1] : 0.0;
  outcome.target_tokens = static_cast<std::int64_t>(totals[2]);
  noise_and_scale(model, settings);
  outcome.grad_norm = optim::global_grad_norm(comms.shard_group, state.gradient_leaves(),
                                              &model.shared_gradient_elements());
  outcome.skipped = !std::isfinite(outcome.grad_norm);
  return outcome;
}

StepOutcome run_private_step(ShardedLlama& model, ShardedState& state, const optim::AdamW& adamw,
                             const PrivateStepSettings& settings,
                             const std::function<MicroBatchTensors(std::int64_t)>& next_micro_batch,
                             StepComms comms) {
  StepOutcome outcome = private_gradients(model, state, settings, next_micro_batch, comms);
  if (settings.before_update) settings.before_update();
  if (!outcome.skipped) state.update(adamw, settings.lr);
  state.drop_gradients();
  return outcome;
}

}  // namespace nss::train

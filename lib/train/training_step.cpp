#include "train/training_step.h"

#include <cmath>
#include <optional>

#include <torch/torch.h>

#include "model/llama_functional.h"
#include "optim/grad_clip.h"

namespace nss::train {

MicroBatchTensors micro_batch_tensors(const data::TokenBatch& batch, std::uint64_t seed,
                                      std::int64_t step) {
  auto tokens = torch::from_blob(const_cast<std::int64_t*>(batch.tokens.data()),
                                 {batch.rows, batch.row_length()}, torch::kInt64);
  MicroBatchTensors out;
  // clone(): from_blob borrows the batch's vector, which dies with the batch.
  out.inputs = tokens.narrow(1, 0, batch.seq_len).clone();
  out.targets = tokens.narrow(1, 1, batch.seq_len).clone();
  out.target_mask = torch::from_blob(const_cast<std::uint8_t*>(batch.target_mask.data()),
                                     {batch.rows, batch.seq_len}, torch::kUInt8)
                        .to(torch::kFloat32);
  if (!batch.positions.empty()) {
    const auto rows_of = [&](const std::vector<std::int64_t>& values) {
      return torch::from_blob(const_cast<std::int64_t*>(values.data()), {batch.rows, batch.seq_len},
                              torch::kInt64)
          .clone();
    };
    out.positions = rows_of(batch.positions);
    out.segments = rows_of(batch.segments);
  }
  out.randomness = {seed, step, batch.sample_ids};
  return out;
}

std::optional<model::DocumentMask> document_mask_of(const MicroBatchTensors& batch,
                                                    model::DocumentAttention how) {
  if (!batch.positions.defined()) return std::nullopt;
  return model::document_mask(batch.positions, batch.segments, how);
}

MicroBatchTensors on_device(MicroBatchTensors batch, const torch::Device& device) {
  if (device.is_cpu()) return batch;
  batch.inputs = batch.inputs.to(device);
  batch.targets = batch.targets.to(device);
  batch.target_mask = batch.target_mask.to(device);
  if (batch.positions.defined()) {
    batch.positions = batch.positions.to(device);
    batch.segments = batch.segments.to(device);
  }
  return batch;
}

StepOutcome run_training_step(
    ShardedLlama& model, ShardedState& state, const optim::AdamW& adamw,
    const StepSettings& settings,
    const std::function<MicroBatchTensors(std::int64_t)>& next_micro_batch, StepComms comms) {
  comm::Communicator& comm = comms.world;
  std::vector<MicroBatchTensors> batches;
  torch::Tensor local_targets = torch::zeros({}, torch::kInt64);
  for (std::int64_t micro = 0; micro < settings.micro_steps; ++micro) {
    batches.push_back(next_micro_batch(micro));
    local_targets += batches.back().target_mask.ne(0).sum().cpu();
  }
  StepOutcome outcome;
  outcome.lr = settings.lr;
  outcome.target_tokens = local_targets.item<std::int64_t>();
  {
    comm::CollectiveLabel label(comm, "target tokens");
    comm.all_reduce(&outcome.target_tokens, 1, comm::ReduceOp::kSum);
    outcome.target_tokens /= comms.tensor_ranks;
  }
  if (outcome.target_tokens == 0) {
    outcome.skipped = true;
    return outcome;
  }
  const double weight = 1.0 / static_cast<double>(outcome.target_tokens);

  // Summed on the device and read once: reading each micro-batch's loss
  // would make the host wait for the device every micro-step.
  torch::Tensor loss_sum;
  for (MicroBatchTensors& batch : batches) {
    const auto documents = document_mask_of(batch, model.plan().packed_attention);
    torch::Tensor loss = model.loss(batch.inputs, batch.targets, batch.target_mask * weight,
                                    &batch.randomness, documents ? &*documents : nullptr);
    loss.backward();
    const torch::Tensor value = loss.detach().to(torch::kFloat64);
    loss_sum = loss_sum.defined() ? loss_sum + value : value;
  }
  model.finish_collectives();
  double local_loss = loss_sum.item<double>();
  {
    comm::CollectiveLabel label(comm, "loss");
    comm.all_reduce(&local_loss, 1, comm::ReduceOp::kSum);
    local_loss /= comms.tensor_ranks;
  }
  outcome.loss = local_loss;  // the scale already divided by the global target count

  if (settings.before_update) settings.before_update();
  const std::vector<torch::Tensor*> leaves = state.gradient_leaves();
  outcome.grad_norm =
      optim::global_grad_norm(comms.shard_group, leaves, &model.shared_gradient_elements());
  outcome.skipped = !std::isfinite(outcome.loss) || !std::isfinite(outcome.grad_norm);
  if (!outcome.skipped) {
    optim::clip_grads(leaves, outcome.grad_norm, settings.grad_clip);
    state.update(adamw, settings.lr);
  }
  state.drop_gradients();
  return outcome;
}

}  // namespace nss::train

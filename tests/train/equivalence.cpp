#include "equivalence.h"

#include <cmath>
#include <cstdio>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "comm/local_communicator.h"
#include "config/derived.h"
#include "config/load.h"
#include "model/initial_weights.h"
#include "model/llama_model.h"
#include "optim/adamw.h"
#include "optim/grad_clip.h"
#include "optim/lr_schedule.h"
#include "tiny_batches.h"
#include "train/sharded_llama.h"
#include "train/sharded_state.h"

namespace nss::train::testing {

Layout::Layout(int group_size, int tensor_size, int kv_replicas)
    : world(comm::MpiCommunicator::create(MPI_COMM_WORLD)),
      shape(comm::shard_group_shape(world->size(), group_size, tensor_size)),
      groups(comm::split_shard_groups(MPI_COMM_WORLD, shape)) {
  if (groups.tensor) key_value = comm::split_key_value_groups(*groups.tensor, kv_replicas);
}

int world_size() {
  return comm::MpiCommunicator::create(MPI_COMM_WORLD)->size();
}

std::vector<int> group_sizes(int world_size) {
  std::vector<int> sizes;
  for (int g = 1; g <= world_size; ++g)
    if (world_size % g == 0) sizes.push_back(g);
  return sizes;
}

config::Config make_config(const Case& c) {
  std::string yaml = R"(
model: {preset: tiny, hidden_size: 50, intermediate_size: 100, num_hidden_layers: 2,
        num_attention_heads: 5, num_key_value_heads: 1, head_dim: 10, vocab_size: 259,
        max_position_embeddings: 64}
data: {seq_len: 12}
training: {lr: 0.001, min_lr: 0.0001, warmup_steps: 2, max_steps: 8, weight_decay: 0.1,
           grad_clip: 1.0, beta2: 0.99}
)";
  config::Config config = config::parse_config_text(yaml, "test");
  config.model.tie_word_embeddings = c.tied;
  config.training.global_batch_size = c.global_batch;
  config.training.activation_checkpointing = !c.checkpointing ? config::Recompute::kNone
                                             : c.selective    ? config::Recompute::kSelective
                                                              : config::Recompute::kFull;
  config.training.lora.enabled = c.lora;
  config.training.lora.rank = 4;
  config.training.lora.dropout = 0.1;
  config.training.lora.targets = {"q_proj", "v_proj", "down_proj"};
  if (c.loss_chunk_tokens >= 0) config.training.loss_chunk_tokens = c.loss_chunk_tokens;
  use_family(config.model, c.family);
  return config;
}

Result train_unsharded(const config::Config& config, bool masked, bool packed) {
  const auto& t = config.training;
  model::LlamaModel model(config.model, t.lora, torch::TensorOptions().dtype(torch::kFloat32));
  model.load(
      model::InitialWeights(config.model, t.lora, static_cast<std::uint64_t>(config.run.seed)));
  std::vector<torch::Tensor> params, moments_1, moments_2;
  std::vector<optim::AdamWShard> shards;
  std::vector<std::string> names;
  for (int u = 0; u < model.num_units(); ++u) {
    for (std::size_t i = 0; i < model.unit_specs(u).size(); ++i) {
      const auto& spec = model.unit_specs(u)[i];
      if (!spec.trainable) continue;
      params.push_back(model.unit_tensors(u)[i]);
      names.push_back(spec.name);
    }
  }
  moments_1.reserve(params.size());
  moments_2.reserve(params.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    moments_1.push_back(torch::zeros_like(params[i]).detach());
    moments_2.push_back(torch::zeros_like(params[i]).detach());
  }
  for (int u = 0, k = 0; u < model.num_units(); ++u) {
    for (const auto& spec : model.unit_specs(u)) {
      if (!spec.trainable) continue;
      const bool decay =
          spec.role != model::ParamRole::kNorm && spec.role != model::ParamRole::kEmbedding;
      layout::ElementRanges ranges;
      if (decay) ranges.emplace_back(0, params[k].numel());
      shards.push_back({&params[k], &moments_1[k], &moments_2[k], ranges});
      ++k;
    }
  }
  const optim::AdamW adamw({t.beta1, t.beta2, t.eps, t.weight_decay});
  const optim::LrSchedule schedule({t.lr, t.min_lr, t.warmup_steps, t.max_steps, t.lr_schedule});
  comm::LocalCommunicator single(1);
  std::vector<torch::Tensor*> pointers;
  for (auto& p : params) pointers.push_back(&p);
  Result result;
  std::int64_t applied = 0;
  for (int step = 1; step <= kSteps; ++step) {
    std::vector<std::int64_t> ids;
    for (std::int64_t i = 0; i < t.global_batch_size; ++i)
      ids.push_back((step - 1) * t.global_batch_size + i);
    const auto batch = batch_of(ids, config.model.vocab_size, step,
                                static_cast<std::uint64_t>(config.run.seed), masked, packed);
    model::DropoutKey key{batch.randomness.seed, step, ids, 0};
    const auto documents = document_mask_of(batch, model::DocumentAttention::kPerDocument);
    // The mean over the whole batch's targets, computed here in one piece.
    torch::Tensor loss = model.weighted_loss(
        batch.inputs, batch.targets, batch.target_mask / batch.target_mask.sum(),
        t.lora.enabled ? &key : nullptr, documents ? &*documents : nullptr);
    loss.backward();
    result.losses.push_back(loss.item<double>());
    const double norm = optim::global_grad_norm(single, pointers);
    result.grad_norms.push_back(norm);
    optim::clip_grads(pointers, norm, t.grad_clip);
    adamw.step(shards, schedule.at(step), ++applied);
    for (auto* p : pointers) p->mutable_grad() = torch::Tensor();
  }
  for (std::size_t i = 0; i < params.size(); ++i)
    result.params[names[i]] = params[i].detach().clone();
  return result;
}

Result train_sharded(const config::Config& config, fsdp::ShardComms comms, StepComms step_comms,
                     std::int64_t micro_batch, const Placement& placement, bool masked, bool packed,
                     const fsdp::ParamFiller* base, TensorComms tensor) {
  const comm::Communicator& comm = step_comms.world;
  const int data_rank = config::data_parallel_rank(config, comm.rank());
  const int data_ranks = config::data_parallel_ranks(config, comm.size());
  const auto& t = config.training;
  plan::RunPlan plan = plan::make_run_plan(
      config, placement.device.is_cuda() ? DeviceKind::kCuda : DeviceKind::kCpu, comm.size());
  plan.compute_dtype = placement.dtype == torch::kBFloat16 ? config::ComputeDtype::kBf16
                                                           : config::ComputeDtype::kFp32;
  plan.prefetch = placement.prefetch;
  ShardedLlama model(config.model, t.lora, false, comms, plan, placement.device, kSeqLen, tensor);
  if (base)
    model.initialize(*base);
  else
    model.initialize(
        model::InitialWeights(config.model, t.lora, static_cast<std::uint64_t>(config.run.seed)));
  ShardedState state(model);
  const optim::AdamW adamw({t.beta1, t.beta2, t.eps, t.weight_decay});
  const optim::LrSchedule schedule({t.lr, t.min_lr, t.warmup_steps, t.max_steps, t.lr_schedule});
  const std::int64_t per_rank = t.global_batch_size / data_ranks;
  Result result;
  for (int step = 1; step <= kSteps; ++step) {
    StepSettings settings{step, per_rank / micro_batch, schedule.at(step), t.grad_clip, nullptr};
    const auto outcome = run_training_step(
        model, state, adamw, settings,
        [&](std::int64_t micro) {
          std::vector<std::int64_t> ids;
          const std::int64_t first =
              (step - 1) * t.global_batch_size + data_rank * per_rank + micro * micro_batch;
          for (std::int64_t i = 0; i < micro_batch; ++i) ids.push_back(first + i);
          return on_device(batch_of(ids, config.model.vocab_size, step,
                                    static_cast<std::uint64_t>(config.run.seed), masked, packed),
                           placement.device);
        },
        step_comms);
    EXPECT_FALSE(outcome.skipped);
    result.losses.push_back(outcome.loss);
    result.grad_norms.push_back(outcome.grad_norm);
  }
  result.params = gather_trainable(model, [](fsdp::ShardedUnit& unit) { return unit.master(); });
  return result;
}

Result train_sharded(const config::Config& config, comm::Communicator& comm,
                     std::int64_t micro_batch, const Placement& placement, bool masked, bool packed,
                     const fsdp::ParamFiller* base) {
  return train_sharded(config, comm, comm, micro_batch, placement, masked, packed, base);
}

namespace {

struct Differences {
  double loss = 0;    // the largest relative loss difference of a step
  double params = 0;  // max |difference| / max |parameter|, both over the whole model
};

// Loss and gradient norm per step and the final parameters of `sharded`
// against `reference` (gtest expectations).
Differences expect_close(const Result& sharded, const Result& reference,
                         const Tolerance& tolerance) {
  Differences d;
  for (int s = 0; s < kSteps; ++s) {
    EXPECT_NEAR(sharded.losses[s], reference.losses[s],
                tolerance.loss * std::abs(reference.losses[s]))
        << "step " << s + 1;
    // Each tensor counted once whatever the ranks that hold it.
    EXPECT_NEAR(sharded.grad_norms[s], reference.grad_norms[s],
                tolerance.loss * reference.grad_norms[s])
        << "gradient norm at step " << s + 1;
    d.loss = std::max(d.loss, std::abs(sharded.losses[s] / reference.losses[s] - 1));
  }
  EXPECT_EQ(sharded.params.size(), reference.params.size());
  double largest = 0, worst = 0;
  std::string worst_name;
  for (const auto& [name, expected] : reference.params) {
    largest = std::max(largest, expected.abs().max().item<double>());
    const auto it = sharded.params.find(name);
    if (it == sharded.params.end()) continue;
    const double diff = (it->second - expected).abs().max().item<double>();
    if (diff > worst) worst = diff, worst_name = name;
  }
  d.params = worst / largest;
  EXPECT_LE(d.params, tolerance.params) << "largest difference in " << worst_name << ": " << worst;
  return d;
}

}  // namespace

void expect_equivalent(const Case& c, fsdp::ShardComms comms, StepComms step_comms,
                       const Placement& placement, const Tolerance& tolerance) {
  const comm::Communicator& comm = step_comms.world;
  const config::Config config = make_config(c);
  const std::int64_t micro = c.micro_batch > 0 ? c.micro_batch : c.global_batch / comm.size();
  const Result sharded =
      train_sharded(config, comms, step_comms, micro, placement, c.masked, c.packed);
  const Differences d =
      expect_close(sharded, train_unsharded(config, c.masked, c.packed), tolerance);
  if (comm.rank() == 0)
    std::printf(
        "[equivalence] %d ranks (shard groups of %d) on %s (%s): max relative loss difference "
        "%.2e, max|dp|/max|p| %.2e\n",
        comm.size(), comms.shard->size(), placement.device.str().c_str(),
        c10::toString(placement.dtype), d.loss, d.params);
}

void expect_equivalent(const Case& c, const config::Config& config, Layout& layout,
                       const Tolerance& tolerance) {
  const int data_ranks = config::data_parallel_ranks(config, layout.world->size());
  const std::int64_t micro = c.micro_batch > 0 ? c.micro_batch : c.global_batch / data_ranks;
  const Result sharded = train_sharded(config, layout.unit_comms(), layout.step_comms(), micro, {},
                                       c.masked, c.packed, nullptr, layout.tensor_comms());
  const Differences d =
      expect_close(sharded, train_unsharded(config, c.masked, c.packed), tolerance);
  if (layout.world->rank() == 0)
    std::printf(
        "[equivalence] %d ranks as (%d, %d, %d) replicas x shard x tensor: max relative "
        "loss difference %.2e, max|dp|/max|p| %.2e\n",
        layout.world->size(), layout.shape.replicas(), layout.shape.group_size,
        layout.shape.tensor_size, d.loss, d.params);
}

void expect_equivalent(const Case& c, comm::Communicator& comm, const Placement& placement,
                       const Tolerance& tolerance) {
  expect_equivalent(c, comm, comm, placement, tolerance);
}

}  // namespace nss::train::testing

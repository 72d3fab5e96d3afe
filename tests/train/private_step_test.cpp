// DP-SGD's private gradient (train/private_step.h) at 1, 2 and 4 ranks:
// with sigma = 0 it equals a reference that computes each example's gradient
// alone with plain autograd on whole tensors, clips it to C and sums
// (relative 1e-5), whatever the ranks and micro-batches, with recompute on
// and off, LoRA dropout, examples without targets, tied embeddings and an NF4
// base (QLoRA; the reference on the same round-tripped base); with noise only (every
// row padding) it is exactly the key's noise of each whole tensor, divided by
// the expected batch, at any world size. On a GPU (the `Cuda` case, run by
// scripts/bench/gpu_backlog.sh) the same sum in fp32 and bf16 compute.
#include "train/private_step.h"

#include <cmath>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "comm/mpi_communicator.h"
#include "comm/shard_groups.h"
#include "config/derived.h"
#include "config/load.h"
#include "equivalence.h"
#include "model/initial_weights.h"
#include "model/llama_model.h"
#include "model/tensor_parallel_params.h"
#include "model/unit_layouts.h"
#include "optim/grad_clip.h"
#include "privacy/private_noise.h"
#include "privacy/secret_key.h"
#include "support/cuda_ranks.h"
#include "tiny_batches.h"
#include "train/sharded_llama.h"
#include "train/sharded_state.h"

namespace nss::train {
namespace {

using testing::batch_of;
using testing::kSeqLen;

constexpr std::int64_t kExamples = 8;
constexpr std::uint64_t kSeed = 5;

struct Case {
  bool checkpointing = true;
  std::int64_t micro_batch = 1;
  bool tied = false;  // tied embeddings (the head gathers the embedding unit)
  bool nf4 = false;   // QLoRA: an NF4 base with double quantisation
  std::string family = "llama";
};

config::Config make_config(const Case& c) {
  config::Config config = config::parse_config_text(R"(
model: {preset: tiny, hidden_size: 50, intermediate_size: 100, num_hidden_layers: 2,
        num_attention_heads: 5, num_key_value_heads: 1, head_dim: 10, vocab_size: 259,
        max_position_embeddings: 64}
data: {seq_len: 12}
training: {lora: {enabled: true, rank: 4, dropout: 0.1, targets: [q_proj, v_proj, down_proj]}}
)",
                                                    "test");
  config.training.activation_checkpointing =
      c.checkpointing ? config::Recompute::kFull : config::Recompute::kNone;
  config.model.tie_word_embeddings = c.tied;
  testing::use_family(config.model, c.family);
  if (c.nf4) {
    config.training.lora.quantize_base = config::QuantizeBase::kNf4;
    config.training.lora.double_quant = true;
  }
  return config;
}

using Gradients = std::map<std::string, torch::Tensor>;

// LoRA's B starts at zero, which would leave A without gradient: both models
// get B[i] = 0.05 sin(0.37 i + 1) over each B's row-major elements instead.
bool is_lora_b(const std::string& name) {
  return name.find("lora_B") != std::string::npos;
}

torch::Tensor lora_b_values(std::int64_t first, std::int64_t count) {
  return 0.05 * torch::sin(0.37 * torch::arange(first, first + count, torch::kFloat64) + 1.0)
                    .to(torch::kFloat32);
}

// Under tensor parallelism each rank's part of B gets its elements' values
// of the whole B.
void set_lora_b(ShardedLlama& model) {
  torch::NoGradGuard no_grad;
  const model::TensorParallel* tp = model.tensor_parallel();
  std::map<std::string, model::ParamSpec> specs;
  for (const auto& spec : model::all_parameters(model.model(), model.lora()))
    specs[spec.name] = spec;
  for (auto& unit : model.units()) {
    const auto& layout = unit->layout();
    for (const auto& piece : layout.shard_pieces(true, unit->comm().rank())) {
      const std::string& name = layout.params()[piece.param].name;
      if (!is_lora_b(name)) continue;
      torch::Tensor shard = unit->master().narrow(0, piece.shard_offset, piece.length);
      if (!tp) {
        shard.copy_(lora_b_values(piece.tensor_offset, piece.length));
        continue;
      }
      const model::ParamSpec& spec = specs.at(name);
      model::for_each_whole_run(
          *tp->plan, model::parameter_placement(*tp->plan, spec), spec.shape, tp->rank(),
          piece.tensor_offset, piece.length,
          [&](std::int64_t whole, std::int64_t count, std::int64_t part) {
            shard.narrow(0, part - piece.tensor_offset, count).copy_(lora_b_values(whole, count));
          });
    }
  }
}

// The reference: each example alone, its mean loss over its targets, its
// gradient clipped to `max_norm`, summed, over `expected_batch`. Also the
// examples' norms before clipping.
Gradients reference_gradient(const config::Config& config, double max_norm, double expected_batch,
                             std::vector<double>* norms) {
  const auto& lora = config.training.lora;
  model::LlamaModel model(config.model, lora, torch::TensorOptions().dtype(torch::kFloat32));
  model.load(model::InitialWeights(config.model, lora, static_cast<std::uint64_t>(config.run.seed)),
             model::base_quantization(lora));
  std::vector<torch::Tensor> params;
  std::vector<std::string> names;
  for (int u = 0; u < model.num_units(); ++u)
    for (std::size_t i = 0; i < model.unit_specs(u).size(); ++i)
      if (model.unit_specs(u)[i].trainable) {
        params.push_back(model.unit_tensors(u)[i]);
        names.push_back(model.unit_specs(u)[i].name);
        if (is_lora_b(names.back())) {
          torch::NoGradGuard no_grad;
          params.back().copy_(lora_b_values(0, params.back().numel()).view(params.back().sizes()));
        }
      }
  Gradients sum;
  for (std::int64_t id = 0; id < kExamples; ++id) {
    const auto batch = batch_of({id}, config.model.vocab_size, 1, kSeed, /*masked=*/true);
    const model::DropoutKey key{kSeed, 1, {id}, 0};
    const torch::Tensor targets = batch.target_mask.sum();
    torch::Tensor loss = model.weighted_loss(batch.inputs, batch.targets,
                                             batch.target_mask / targets.clamp_min(1), &key);
    const auto grads = torch::autograd::grad({loss}, params, {}, false, false, true);
    double squared = 0;
    for (const auto& g : grads)
      if (g.defined()) squared += g.to(torch::kFloat64).square().sum().item<double>();
    const double norm = std::sqrt(squared);
    norms->push_back(norm);
    const double factor = norm > max_norm ? max_norm / norm : 1.0;
    for (std::size_t i = 0; i < params.size(); ++i) {
      const torch::Tensor g = grads[i].defined() ? grads[i].to(torch::kFloat64) * factor
                                                 : torch::zeros_like(params[i], torch::kFloat64);
      sum[names[i]] = sum.count(names[i]) ? sum[names[i]] + g : g;
    }
  }
  for (auto& [name, g] : sum) g = (g / expected_batch).to(torch::kFloat32);
  return sum;
}

struct Sharded {
  Gradients gradient;
  StepOutcome outcome;
};

// Rank r takes examples r, r + N, ... in micro-batches of `micro_batch` rows,
// padded with rows without targets so every rank runs as many micro-steps.
// `padding_only`: every row is padding (an empty Poisson batch).
// Units over `comms` and the step's reductions over `step_comms` (hybrid
// sharding), else all over `comm`.
// Computed on `placement`'s device in its dtype (the CPU in fp32 unless a
// test says otherwise); the gradient comes back on the CPU.
// With config.parallel.tensor_parallel_size > 1 the model computes over
// `tensor`, the ranks of a tensor group taking the same examples.
Sharded sharded_gradient(const config::Config& config, fsdp::ShardComms comms, StepComms step_comms,
                         std::int64_t micro_batch, PrivateStepSettings settings,
                         bool padding_only = false, const testing::Placement& placement = {},
                         TensorComms tensor = {}) {
  const comm::Communicator& world = step_comms.world;
  const int rank = config::data_parallel_rank(config, world.rank());
  const int ranks = config::data_parallel_ranks(config, world.size());
  const auto& t = config.training;
  plan::RunPlan plan;  // no prefetch, as the CPU's
  plan.recompute = t.activation_checkpointing;
  plan.compute_dtype = placement.dtype == torch::kBFloat16 ? config::ComputeDtype::kBf16
                                                           : config::ComputeDtype::kFp32;
  plan.tensor_ranks = static_cast<int>(config.parallel.tensor_parallel_size);
  plan.sequence_parallel = plan.tensor_ranks > 1 && config.parallel.sequence_parallel;
  ShardedLlama model(config.model, t.lora, false, comms, plan, placement.device, kSeqLen, tensor);
  model.initialize(
      model::InitialWeights(config.model, t.lora, static_cast<std::uint64_t>(config.run.seed)));
  set_lora_b(model);
  ShardedState state(model);
  std::vector<std::int64_t> mine;
  for (std::int64_t id = rank; id < kExamples; id += ranks) mine.push_back(id);
  const std::int64_t most = (kExamples + ranks - 1) / ranks;
  settings.micro_steps = (most + micro_batch - 1) / micro_batch;
  Sharded out;
  out.outcome = private_gradients(
      model, state, settings,
      [&](std::int64_t micro) {
        std::vector<std::int64_t> ids, padding;
        for (std::int64_t i = micro * micro_batch; i < (micro + 1) * micro_batch; ++i) {
          const bool real = !padding_only && i < static_cast<std::int64_t>(mine.size());
          ids.push_back(real ? mine[static_cast<std::size_t>(i)] : 1000 + i);
          if (!real) padding.push_back(static_cast<std::int64_t>(ids.size()) - 1);
        }
        MicroBatchTensors batch = batch_of(ids, config.model.vocab_size, 1, kSeed, true);
        for (const std::int64_t row : padding) batch.target_mask[row].zero_();
        return on_device(std::move(batch), placement.device);
      },
      step_comms);
  // Units without trainable parameters have no gradient.
  out.gradient = testing::gather_trainable(model, [](fsdp::ShardedUnit& unit) {
    const torch::Tensor grad = unit.master().grad();
    return (grad.defined() ? grad : torch::zeros_like(unit.master())).to(torch::kCPU);
  });
  return out;
}

Sharded sharded_gradient(const config::Config& config, comm::Communicator& comm,
                         std::int64_t micro_batch, PrivateStepSettings settings,
                         bool padding_only = false, const testing::Placement& placement = {}) {
  return sharded_gradient(config, comm, comm, micro_batch, settings, padding_only, placement);
}

double max_relative_difference(const Gradients& actual, const Gradients& expected) {
  double largest = 0, worst = 0;
  for (const auto& [name, e] : expected) {
    largest = std::max(largest, e.abs().max().item<double>());
    worst = std::max(worst, (actual.at(name) - e).abs().max().item<double>());
  }
  return worst / largest;
}

// Over `comm`, computed on `placement`, within `tolerance` of the fp32 CPU reference.
void expect_clipped_sum(const Case& c, comm::Communicator& comm,
                        const testing::Placement& placement, double tolerance) {
  const config::Config config = make_config(c);
  // C at the median norm: some examples are clipped, some are not.
  std::vector<double> norms;
  reference_gradient(config, 1.0, 1.0, &norms);
  std::vector<double> sorted = norms;
  std::sort(sorted.begin(), sorted.end());
  const double max_norm = sorted[sorted.size() / 2];
  ASSERT_GT(max_norm, 0);
  norms.clear();
  const double expected_batch = 6.5;
  const Gradients reference = reference_gradient(config, max_norm, expected_batch, &norms);

  PrivateStepSettings settings;
  settings.max_grad_norm = max_norm;
  settings.expected_batch = expected_batch;
  const Sharded sharded = sharded_gradient(config, comm, c.micro_batch, settings, false, placement);
  ASSERT_EQ(sharded.gradient.size(), reference.size());
  const double difference = max_relative_difference(sharded.gradient, reference);
  EXPECT_LE(difference, tolerance);
  EXPECT_FALSE(sharded.outcome.skipped);
  // The norm reported is the (here noiseless) private gradient's.
  double squared = 0;
  for (const auto& [name, g] : reference)
    squared += g.to(torch::kFloat64).square().sum().item<double>();
  EXPECT_NEAR(sharded.outcome.grad_norm, std::sqrt(squared), tolerance * std::sqrt(squared));
  if (comm.rank() == 0)
    std::printf(
        "[private] %d ranks on %s in %s, micro-batch %lld, recompute %d, tied %d, nf4 %d: C %.4g, "
        "max|dg|/max|g| %.2e\n",
        comm.size(), placement.device.str().c_str(), c10::toString(placement.dtype),
        static_cast<long long>(c.micro_batch), c.checkpointing ? 1 : 0, c.tied ? 1 : 0,
        c.nf4 ? 1 : 0, max_norm, difference);
}

void expect_clipped_sum(const Case& c) {
  auto comm = comm::MpiCommunicator::create(MPI_COMM_WORLD);
  expect_clipped_sum(c, *comm, {}, 1e-5);
}

TEST(PrivateStep, ClippedSumEqualsPerExampleReference) {
  expect_clipped_sum({});
}

TEST(PrivateStep, ClippedSumWithLargerMicroBatches) {
  expect_clipped_sum({true, 3});
}

TEST(PrivateStep, ClippedSumWithoutRecompute) {
  expect_clipped_sum({false, 2});
}

TEST(PrivateStep, ClippedSumWithTiedEmbeddings) {
  expect_clipped_sum({true, 2, true});
}

TEST(PrivateStep, ClippedSumOnAnNf4Base) {
  expect_clipped_sum({true, 2, false, true});
}

// The per-example gradients of the other families' features (q/k norms,
// windows, sandwich norms, GeGLU, scaled embeddings; an NF4 base for Gemma 3).
TEST(PrivateStep, ClippedSumForQwen3AndGemma3) {
  expect_clipped_sum({true, 2, true, false, "qwen3"});
  expect_clipped_sum({false, 2, false, false, "qwen3"});
  expect_clipped_sum({true, 2, true, false, "gemma3"});
  expect_clipped_sum({true, 3, false, true, "gemma3"});
}

// On GPUs (one rank per GPU, NCCL): fp32 compute within the CPU's tolerance
// up to the order of sums; bf16 compute (fp32 masters and gradients, fp64
// norms) within bf16 rounding of the fp32 CPU reference.
TEST(PrivateStep, CudaClippedSumMatchesTheCpuReference) {
  NSS_CUDA_RANKS_OR_SKIP(cuda);
  const torch::Device gpu = cuda.device;
  comm::Communicator& nccl = *cuda.nccl;
  expect_clipped_sum({true, 2}, nccl, {gpu, torch::kFloat32}, 1e-4);
  expect_clipped_sum({true, 2}, nccl, {gpu, torch::kBFloat16}, 3e-2);
  expect_clipped_sum({true, 2, false, true}, nccl, {gpu, torch::kBFloat16}, 3e-2);  // QLoRA
}

TEST(PrivateStep, EmptyBatchGetsTheKeysNoiseAtAnyWorldSize) {
  auto comm = comm::MpiCommunicator::create(MPI_COMM_WORLD);
  const config::Config config = make_config({});
  const auto secret = privacy::SecretKey::from_hex(std::string(64, 'a'));
  const privacy::NoiseKey key = secret.noise_key();
  PrivateStepSettings settings;
  settings.step = 3;
  settings.max_grad_norm = 0.5;
  settings.noise_multiplier = 1.2;
  settings.expected_batch = 4;
  settings.noise_key = &key;
  const Sharded sharded = sharded_gradient(config, *comm, 2, settings, /*padding_only=*/true);
  EXPECT_EQ(sharded.outcome.loss, 0.0);
  EXPECT_EQ(sharded.outcome.target_tokens, 0);
  ASSERT_FALSE(sharded.gradient.empty());
  for (const auto& [name, g] : sharded.gradient) {
    torch::Tensor expected = torch::empty({g.numel()}, torch::kFloat32);
    privacy::private_noise(key, name, 3, 0, g.numel(), 0.5 * 1.2, expected.data_ptr<float>());
    EXPECT_TRUE(torch::equal(g.reshape(-1), expected / 4)) << name;
  }
}

// Step 2 of a run keyed by `key`, clipping at 0.05 (every example clipped)
// with noise multiplier 0.8, over every example.
PrivateStepSettings noised_settings(const privacy::NoiseKey& key) {
  PrivateStepSettings settings;
  settings.step = 2;
  settings.max_grad_norm = 0.05;
  settings.noise_multiplier = 0.8;
  settings.expected_batch = kExamples;
  settings.noise_key = &key;
  return settings;
}

// Hybrid sharding: every replica adds the same noise (keyed by tensor
// elements, not ranks) after the replicas' sum, so the noised gradient and
// its norm equal full sharding's at every group size.
TEST(PrivateStep, HybridShardingGivesTheSameNoisedGradient) {
  auto world = comm::MpiCommunicator::create(MPI_COMM_WORLD);
  const config::Config config = make_config({});
  const privacy::NoiseKey key = privacy::SecretKey::from_hex(std::string(64, 'b')).noise_key();
  const PrivateStepSettings settings = noised_settings(key);
  const Sharded full = sharded_gradient(config, *world, 1, settings);
  for (int g = 1; g <= world->size(); ++g) {
    if (world->size() % g != 0) continue;
    auto groups =
        comm::split_shard_groups(MPI_COMM_WORLD, comm::shard_group_shape(world->size(), g));
    const Sharded hybrid = sharded_gradient(config, {*groups.shard, groups.replicate.get(), *world},
                                            {*world, *groups.shard}, 1, settings);
    EXPECT_LE(max_relative_difference(hybrid.gradient, full.gradient), 1e-6) << "group size " << g;
    EXPECT_NEAR(hybrid.outcome.grad_norm, full.outcome.grad_norm, 1e-6 * full.outcome.grad_norm)
        << "group size " << g;
    EXPECT_EQ(hybrid.outcome.loss, full.outcome.loss);
  }
}

// Tensor parallelism: each example's norm is summed over the tensor ranks'
// parts (a tensor they all hold counted once) and the noise is keyed by the
// whole tensors' elements, so the noised gradient, its norm and the loss
// equal those of full sharding at (T, G) = (2, 1), (2, 2), (4, 1) and
// (R, G, T) = (2, 1, 2), on a model whose heads those T divide.
TEST(PrivateStep, TensorParallelismGivesTheSameNoisedGradient) {
  auto world = comm::MpiCommunicator::create(MPI_COMM_WORLD);
  config::Config config = make_config({});
  config.model.hidden_size = 48;
  config.model.num_attention_heads = 4;
  config.model.num_key_value_heads = 2;
  config.model.head_dim = 12;
  config.model.intermediate_size = 96;
  config.training.lora.targets = {"q_proj", "k_proj", "v_proj", "o_proj", "down_proj"};
  const privacy::NoiseKey key = privacy::SecretKey::from_hex(std::string(64, 'c')).noise_key();
  const PrivateStepSettings settings = noised_settings(key);
  const Sharded full = sharded_gradient(config, *world, 1, settings);
  for (const int tensor : {2, 4})
    for (int group = 1; tensor * group <= world->size(); group *= 2) {
      if (world->size() % (tensor * group) != 0) continue;
      config.parallel.tensor_parallel_size = tensor;
      const comm::ShardGroupShape shape = comm::shard_group_shape(world->size(), group, tensor);
      auto groups = comm::split_shard_groups(MPI_COMM_WORLD, shape);
      auto key_value = comm::split_key_value_groups(
          *groups.tensor, static_cast<int>(model::tensor_parallel_plan(config).kv_replicas));
      const Sharded parallel =
          sharded_gradient(config, {*groups.shard, groups.replicate.get(), *world},
                           {*world, *groups.replica, tensor}, 1, settings, false, {},
                           {groups.tensor.get(), key_value.get()});
      SCOPED_TRACE("T = " + std::to_string(tensor) + ", G = " + std::to_string(group));
      EXPECT_LE(max_relative_difference(parallel.gradient, full.gradient), 1e-5);
      EXPECT_NEAR(parallel.outcome.grad_norm, full.outcome.grad_norm,
                  1e-5 * full.outcome.grad_norm);
      EXPECT_NEAR(parallel.outcome.loss, full.outcome.loss, 1e-6 * full.outcome.loss);
    }
}

}  // namespace
}  // namespace nss::train

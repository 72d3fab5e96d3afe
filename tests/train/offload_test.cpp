// parallel.offload_optimizer at the library level, on the CPU as the
// "device" (the trainer refuses the key on CPU runs; the library runs it
// anywhere so that this equivalence is tested without a GPU): the offloaded
// step (host masters and moments, OffloadedAdamW, a compute-dtype shard for
// the gathers, the gradient on a zero-stride anchor leaf) gives bitwise the
// losses, masters and moments of the ordinary step at 1, 2 and 4 ranks, for
// full fine-tuning in fp32 and bf16, tied embeddings, LoRA, QLoRA, a DP-SGD
// private step and every hybrid sharding layout; checkpoints saved with
// offload resume without it and the other way round, to the same values. On
// a GPU (the `Cuda` case, run by scripts/bench/gpu_backlog.sh) the host's
// AdamW against the device's, within fp32 rounding.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <unistd.h>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "checkpoint/load.h"
#include "checkpoint/save.h"
#include "comm/agreement.h"
#include "comm/mpi_communicator.h"
#include "comm/shard_groups.h"
#include "equivalence.h"
#include "model/initial_weights.h"
#include "optim/adamw.h"
#include "optim/lr_schedule.h"
#include "privacy/secret_key.h"
#include "support/cuda_ranks.h"
#include "tiny_batches.h"
#include "train/private_step.h"
#include "train/sharded_llama.h"
#include "train/sharded_state.h"

namespace nss::train {
namespace {

using namespace testing;  // the equivalence harness

// The gradient anchor's contract with AccumulateGrad, as ShardedUnit relies
// on it: a contiguous fp32 gradient of the anchor's shape is adopted (or
// cloned contiguous) as .grad(), later backward passes add into it, and the
// one-element storage under the anchor never changes.
TEST(GradientAnchor, AccumulateGradGivesAContiguousFp32GradientAndAccumulates) {
  constexpr std::int64_t kShard = 37;
  torch::Tensor anchor = torch::zeros({1}).expand({kShard}).detach().requires_grad_(true);
  ASSERT_TRUE(anchor.is_leaf());
  EXPECT_EQ(anchor.stride(0), 0);
  const torch::Tensor weights = torch::arange(kShard, torch::kFloat32);
  (anchor * weights).sum().backward();
  const torch::Tensor first = anchor.grad();
  ASSERT_TRUE(first.defined());
  EXPECT_EQ(first.scalar_type(), torch::kFloat32);
  EXPECT_EQ(first.sizes(), torch::IntArrayRef({kShard}));
  EXPECT_TRUE(first.is_contiguous());
  EXPECT_EQ(first.stride(0), 1);
  EXPECT_TRUE(torch::equal(first, weights));
  (anchor * weights * 2).sum().backward();
  EXPECT_TRUE(torch::equal(anchor.grad(), weights * 3));
  EXPECT_TRUE(anchor.grad().is_contiguous());
  EXPECT_EQ(anchor.grad().data_ptr(), first.data_ptr());  // accumulated in place
  // What the per-example path and DP-SGD noise do: set and change .grad() directly.
  anchor.mutable_grad() = torch::ones({kShard});
  anchor.mutable_grad().mul_(0.5);
  EXPECT_TRUE(torch::equal(anchor.grad(), torch::full({kShard}, 0.5f)));
  EXPECT_EQ(anchor.detach().sum().item<float>(), 0.0f);
}

struct Mode {
  bool offload = false;
  bool private_step = false;  // DP-SGD: run_private_step with noise
  torch::Dtype dtype = torch::kFloat32;
  torch::Device device = torch::kCPU;  // where the model computes
};

// This rank's state after some steps: copies of every unit's shards.
struct Snapshot {
  std::vector<double> losses;
  std::vector<torch::Tensor> masters, exp_avg, exp_avg_sq, gathered;
};

// A tiny model and its state, trained step by step as the trainer does.
class TinyTraining {
 public:
  TinyTraining(const config::Config& config, fsdp::ShardComms comms, StepComms step_comms,
               Mode mode)
      : config_(config),
        step_comms_(step_comms),
        mode_(mode),
        model_(config.model, config.training.lora, false, comms, run_plan(config, mode),
               mode.device, kSeqLen),
        adamw_({config.training.beta1, config.training.beta2, config.training.eps,
                config.training.weight_decay}),
        schedule_({config.training.lr, config.training.min_lr, config.training.warmup_steps,
                   config.training.max_steps, config.training.lr_schedule}),
        secret_(privacy::SecretKey::from_hex(std::string(64, 'a'))),
        key_(secret_.noise_key()) {
    model_.initialize(model::InitialWeights(config.model, config.training.lora,
                                            static_cast<std::uint64_t>(config.run.seed)));
    state_ = std::make_unique<ShardedState>(model_);
  }

  // Offload on any device: the library runs it on the CPU too, so that its
  // equivalence is tested there.
  static plan::RunPlan run_plan(const config::Config& config, Mode mode) {
    plan::RunPlan plan;
    plan.recompute = config.training.activation_checkpointing;
    plan.compute_dtype =
        mode.dtype == torch::kBFloat16 ? config::ComputeDtype::kBf16 : config::ComputeDtype::kFp32;
    plan.offload_optimizer = mode.offload;
    return plan;
  }

  // Step `step` (1-based) over the global batch, one row per micro-step.
  void step(int step) {
    const comm::Communicator& world = step_comms_.world;
    const std::int64_t global = config_.training.global_batch_size;
    const std::int64_t per_rank = global / world.size();
    const auto next = [&](std::int64_t micro) {
      const std::int64_t id = (step - 1) * global + world.rank() * per_rank + micro;
      return on_device(batch_of({id}, config_.model.vocab_size, step,
                                static_cast<std::uint64_t>(config_.run.seed), mode_.private_step),
                       mode_.device);
    };
    StepOutcome outcome;
    if (mode_.private_step) {
      PrivateStepSettings settings;
      settings.step = step;
      settings.micro_steps = per_rank;
      settings.lr = schedule_.at(step);
      settings.max_grad_norm = 0.5;
      settings.noise_multiplier = 0.8;
      settings.expected_batch = static_cast<double>(global);
      settings.noise_key = &key_;
      outcome = run_private_step(model_, *state_, adamw_, settings, next, step_comms_);
    } else {
      const StepSettings settings{step, per_rank, schedule_.at(step), config_.training.grad_clip,
                                  nullptr};
      outcome = run_training_step(model_, *state_, adamw_, settings, next, step_comms_);
    }
    EXPECT_FALSE(outcome.skipped) << "step " << step;
    losses_.push_back(outcome.loss);
  }

  Snapshot snapshot() {
    Snapshot s;
    s.losses = losses_;
    for (std::size_t u = 0; u < model_.units().size(); ++u) {
      // On the CPU, wherever they live (offloaded state is on the host).
      s.masters.push_back(
          state_->tensor(u, layout::StateTensor::kMaster).detach().to(torch::kCPU, false, true));
      s.exp_avg.push_back(
          state_->tensor(u, layout::StateTensor::kExpAvg).to(torch::kCPU, false, true));
      s.exp_avg_sq.push_back(
          state_->tensor(u, layout::StateTensor::kExpAvgSq).to(torch::kCPU, false, true));
      // What the next forward computes with: the gathered compute-dtype parameters.
      s.gathered.push_back(model_.units()[u]
                               ->gather(fsdp::FlatBuffer::kTrainable, "test")
                               .to(torch::kCPU, false, true));
    }
    return s;
  }

  ShardedState& state() { return *state_; }

 private:
  config::Config config_;
  StepComms step_comms_;
  Mode mode_;
  ShardedLlama model_;
  std::unique_ptr<ShardedState> state_;
  optim::AdamW adamw_;
  optim::LrSchedule schedule_;
  privacy::SecretKey secret_;
  privacy::NoiseKey key_;
  std::vector<double> losses_;
};

void expect_bitwise(const std::vector<torch::Tensor>& actual,
                    const std::vector<torch::Tensor>& expected, const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (std::size_t u = 0; u < actual.size(); ++u) {
    EXPECT_EQ(actual[u].scalar_type(), expected[u].scalar_type()) << what << " unit " << u;
    EXPECT_TRUE(torch::equal(actual[u], expected[u])) << what << " unit " << u;
  }
}

void expect_same(const Snapshot& actual, const Snapshot& expected) {
  ASSERT_EQ(actual.losses.size(), expected.losses.size());
  for (std::size_t s = 0; s < actual.losses.size(); ++s)
    EXPECT_EQ(actual.losses[s], expected.losses[s]) << "step " << s + 1;
  expect_bitwise(actual.masters, expected.masters, "master");
  expect_bitwise(actual.exp_avg, expected.exp_avg, "exp_avg");
  expect_bitwise(actual.exp_avg_sq, expected.exp_avg_sq, "exp_avg_sq");
  expect_bitwise(actual.gathered, expected.gathered, "gathered parameters");
}

Snapshot trained(const config::Config& config, Layout& layout, Mode mode) {
  TinyTraining training(config, layout.unit_comms(), layout.step_comms(), mode);
  for (int step = 1; step <= kSteps; ++step) training.step(step);
  return training.snapshot();
}

// Offloaded and ordinary runs of `config`, compared bit for bit.
void expect_offload_equal(const config::Config& config, int group_size, Mode mode = {}) {
  Layout layout(group_size);
  mode.offload = false;
  const Snapshot expected = trained(config, layout, mode);
  mode.offload = true;
  const Snapshot offloaded = trained(config, layout, mode);
  expect_same(offloaded, expected);
  EXPECT_NE(expected.losses.front(), expected.losses.back());  // it trained
}

TEST(OptimizerOffload, FullFineTuningIsBitwiseTheOrdinaryStep) {
  expect_offload_equal(make_config({8, 1, false, false, true}), 0);
  expect_offload_equal(make_config({8, 1, false, false, false}), 0);  // no recompute
}

TEST(OptimizerOffload, Bf16ComputeIsBitwiseTheOrdinaryStep) {
  expect_offload_equal(make_config({8, 1, false, false, true}), 0,
                       {false, false, torch::kBFloat16});
}

TEST(OptimizerOffload, TiedEmbeddingsAreBitwiseTheOrdinaryStep) {
  expect_offload_equal(make_config({8, 1, true, false, true}), 0);
}

TEST(OptimizerOffload, LoraAndQloraAreBitwiseTheOrdinaryStep) {
  expect_offload_equal(make_config({8, 1, true, true, true}), 0);
  config::Config qlora = make_config({8, 1, false, true, true});
  qlora.training.lora.quantize_base = config::QuantizeBase::kNf4;
  qlora.training.lora.double_quant = true;
  expect_offload_equal(qlora, 0);
}

TEST(OptimizerOffload, PrivateStepIsBitwiseTheOrdinaryStep) {
  expect_offload_equal(make_config({8, 1, false, true, true}), 0, {false, true});
}

TEST(OptimizerOffload, EveryHybridLayoutIsBitwiseTheOrdinaryStep) {
  const int n = world_size();
  for (int g = 1; g <= n; ++g) {
    if (n % g != 0) continue;
    SCOPED_TRACE("shard group size " + std::to_string(g));
    expect_offload_equal(make_config({8, 1, true, true, true}), g);
    expect_offload_equal(make_config({8, 1, false, true, true}), g, {false, true});
  }
}

void expect_close(const std::vector<torch::Tensor>& actual,
                  const std::vector<torch::Tensor>& expected, const std::string& what,
                  double tolerance) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (std::size_t u = 0; u < actual.size(); ++u) {
    if (expected[u].numel() == 0) continue;
    const double scale = expected[u].abs().max().item<double>();
    const double worst = (actual[u].to(torch::kFloat64) - expected[u].to(torch::kFloat64))
                             .abs()
                             .max()
                             .item<double>();
    EXPECT_LE(worst, tolerance * std::max(scale, 1e-30)) << what << " unit " << u;
  }
}

// On a GPU the offloaded step's AdamW runs on the host (its three streams:
// gradients down, the update, parameters up) and the ordinary one on the
// device, with other rounding: the same training within fp32 rounding, in
// bf16 compute, for full fine-tuning, LoRA and the private step.
TEST(OptimizerOffload, CudaOffloadMatchesTheOrdinaryStep) {
  NSS_CUDA_RANKS_OR_SKIP(cuda);
  const torch::Device gpu = cuda.device;
  comm::Communicator& nccl = *cuda.nccl;
  const fsdp::ShardComms comms{nccl, nullptr, nccl};
  const StepComms step_comms{nccl, nccl};
  const auto run = [&](const config::Config& config, Mode mode) {
    TinyTraining training(config, comms, step_comms, mode);
    for (int step = 1; step <= kSteps; ++step) training.step(step);
    return training.snapshot();
  };
  for (const bool private_step : {false, true}) {
    const config::Config config = make_config({8, 1, false, private_step, true});
    SCOPED_TRACE(private_step ? "LoRA, private step" : "full fine-tuning");
    const Snapshot ordinary = run(config, {false, private_step, torch::kBFloat16, gpu});
    const Snapshot offloaded = run(config, {true, private_step, torch::kBFloat16, gpu});
    ASSERT_EQ(offloaded.losses.size(), ordinary.losses.size());
    for (std::size_t s = 0; s < ordinary.losses.size(); ++s)
      EXPECT_NEAR(offloaded.losses[s], ordinary.losses[s], 1e-4 * std::abs(ordinary.losses[s]));
    expect_close(offloaded.masters, ordinary.masters, "master", 1e-5);
    expect_close(offloaded.exp_avg, ordinary.exp_avg, "exp_avg", 1e-4);
    expect_close(offloaded.exp_avg_sq, ordinary.exp_avg_sq, "exp_avg_sq", 1e-4);
  }
}

TEST(OptimizerOffload, StateLivesOnTheHostAndCheckpointsPointAtIt) {
  Layout layout(0);
  const config::Config config = make_config({8, 1, false, false, true});
  TinyTraining training(config, layout.unit_comms(), layout.step_comms(), {true});
  ShardedState& state = training.state();
  EXPECT_TRUE(state.offloaded());
  const auto& buffers = state.checkpoint_buffers();
  EXPECT_FALSE(state.checkpoint_buffers_are_copies());
  const auto masters = state.masters();
  const auto leaves = state.gradient_leaves();
  ASSERT_EQ(masters.size(), leaves.size());
  for (std::size_t u = 0; u < masters.size(); ++u) {
    EXPECT_FALSE(masters[u]->requires_grad());
    if (masters[u]->numel() > 0) {
      EXPECT_TRUE(leaves[u]->requires_grad());
      EXPECT_EQ(leaves[u]->stride(0), 0);  // the anchor holds no shard-sized memory
    }
  }
  // Every checkpoint buffer is the host state itself, not a copy.
  std::vector<const void*> state_memory;
  for (const auto kind :
       {layout::StateTensor::kMaster, layout::StateTensor::kExpAvg, layout::StateTensor::kExpAvgSq})
    for (const auto& t : state.tensors(kind)) state_memory.push_back(t.data_ptr());
  for (const auto& buffer : buffers)
    EXPECT_NE(std::find(state_memory.begin(), state_memory.end(), buffer.data), state_memory.end())
        << buffer.dataset;
  const ShardedState::Bytes bytes = state.bytes();
  EXPECT_EQ(bytes.masters, 0);
  EXPECT_EQ(bytes.moments, 0);
  EXPECT_EQ(bytes.offloaded_host, 3 * state.layout().bytes(layout::StateTensor::kMaster));
  EXPECT_EQ(bytes.compute_shards, state.layout().bytes(layout::StateTensor::kMaster));
}

std::string shared_directory(comm::Communicator& comm) {
  std::string dir;
  if (comm.rank() == 0) {
    std::string pattern = (std::filesystem::temp_directory_path() / "nss_offload_XXXXXX").string();
    dir = ::mkdtemp(pattern.data());
  }
  comm::broadcast_text(comm, dir, 0);
  return dir;
}

// Saved after 2 steps with `save_offloaded`, loaded into a fresh state with
// `load_offloaded`, 2 more steps: the same as 4 uninterrupted steps.
void expect_resume_equal(bool save_offloaded, bool load_offloaded, int group_size) {
  SCOPED_TRACE(std::string("saved ") + (save_offloaded ? "offloaded" : "on the device") +
               ", loaded " + (load_offloaded ? "offloaded" : "on the device"));
  Layout layout(group_size);
  comm::Communicator& world = *layout.world;
  const config::Config config = make_config({8, 1, true, true, true});
  const std::string dir = shared_directory(world);

  TinyTraining first(config, layout.unit_comms(), layout.step_comms(), {save_offloaded});
  first.step(1);
  first.step(2);
  ShardedState& saved = first.state();
  saved.checkpoint_buffers();
  saved.copy_to_host();
  checkpoint::SaveRequest request;
  request.checkpoint_dir = dir;
  request.step = 2;
  request.tensors = saved.checkpoint_tensors();
  request.file_locking = false;
  const checkpoint::SaveResult result =
      checkpoint::save_checkpoint(world, request, saved.saved_buffers());

  TinyTraining resumed(config, layout.unit_comms(), layout.step_comms(), {load_offloaded});
  ShardedState& loaded = resumed.state();
  {
    torch::NoGradGuard no_grad;
    checkpoint::LoadOptions options;
    options.file_locking = false;
    checkpoint::load_checkpoint(world, result.step_dir, loaded.checkpoint_tensors(),
                                loaded.checkpoint_buffers(), options);
    loaded.copy_from_host();
  }
  loaded.applied_updates = saved.applied_updates;
  Snapshot at_save = first.snapshot(), at_load = resumed.snapshot();
  at_load.losses = at_save.losses;
  expect_same(at_load, at_save);

  first.step(3);
  first.step(4);
  resumed.step(3);
  resumed.step(4);
  Snapshot uninterrupted = first.snapshot(), continued = resumed.snapshot();
  uninterrupted.losses.erase(uninterrupted.losses.begin(), uninterrupted.losses.begin() + 2);
  expect_same(continued, uninterrupted);
  world.barrier();
  if (world.rank() == 0) std::filesystem::remove_all(dir);
}

TEST(OptimizerOffload, CheckpointsRoundTripWithAndWithoutOffload) {
  for (const int g : {0, world_size() > 1 ? world_size() / 2 : 1}) {
    SCOPED_TRACE("shard group size " + std::to_string(g));
    expect_resume_equal(true, false, g);
    expect_resume_equal(false, true, g);
    expect_resume_equal(true, true, g);
  }
}

}  // namespace
}  // namespace nss::train

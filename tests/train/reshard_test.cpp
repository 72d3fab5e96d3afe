// parallel.reshard_after_forward: false with activation checkpointing keeps
// each unit's gathered parameters from its forward until its backward, which
// recomputes from them instead of gathering again. At 1, 2 and 4 ranks: the
// same training bit for bit as resharding (full fine-tuning with gradient
// accumulation, tied embeddings, LoRA with dropout, an NF4 base, each also
// with prefetch), the same DP-SGD gradient bit for bit, and one all-gather
// per unit and micro-step in the traffic formula instead of two, with no
// prefetched gather left untaken.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "comm/mpi_communicator.h"
#include "config/load.h"
#include "model/initial_weights.h"
#include "optim/adamw.h"
#include "optim/lr_schedule.h"
#include "quant/nf4_storage.h"
#include "tiny_batches.h"
#include "train/compute_device.h"
#include "train/private_step.h"
#include "train/sharded_llama.h"
#include "train/training_step.h"

namespace nss::train {
namespace {

using testing::batch_of;
using testing::gather_trainable;
using testing::kSeqLen;

constexpr int kSteps = 3;
constexpr std::uint64_t kSeed = 3;

struct Case {
  const char* name;
  bool tied = false;
  bool lora = false;  // with dropout 0.1
  bool nf4 = false;   // QLoRA's base
  bool double_quant = false;
};

config::Config make_config(const Case& c, config::ReshardPolicy reshard) {
  config::Config config = config::parse_config_text(R"(
model: {preset: tiny, hidden_size: 50, intermediate_size: 100, num_hidden_layers: 2,
        num_attention_heads: 5, num_key_value_heads: 1, head_dim: 10, vocab_size: 259,
        max_position_embeddings: 64}
data: {seq_len: 12}
training: {global_batch_size: 8, lr: 0.001, min_lr: 0.0001, warmup_steps: 2, max_steps: 8,
           weight_decay: 0.1, grad_clip: 1.0, beta2: 0.99,
           lora: {rank: 4, dropout: 0.1, targets: [q_proj, v_proj, gate_proj, down_proj]}}
)",
                                                    "test");
  config.model.tie_word_embeddings = c.tied;
  config.training.lora.enabled = c.lora || c.nf4;
  if (c.nf4) config.training.lora.quantize_base = config::QuantizeBase::kNf4;
  config.training.lora.double_quant = c.double_quant;
  config.parallel.reshard_after_forward = reshard;
  return config;
}

// The units as the trainer builds them from `config` (on the CPU), with
// prefetch on or off.
std::unique_ptr<ShardedLlama> make_model(const config::Config& config, comm::Communicator& comm,
                                         bool prefetch) {
  plan::RunPlan plan = plan::make_run_plan(config, DeviceKind::kCpu, comm.size());
  plan.prefetch = prefetch;
  auto model = std::make_unique<ShardedLlama>(config.model, config.training.lora, false, comm, plan,
                                              torch::kCPU, kSeqLen);
  model->initialize(model::InitialWeights(config.model, config.training.lora, kSeed));
  return model;
}

struct Result {
  std::vector<double> losses;
  std::map<std::string, torch::Tensor> masters;  // final, whole
};

// kSteps optimizer steps of one sample per micro-batch (several micro-steps per rank).
Result train(const config::Config& config, comm::Communicator& comm, bool prefetch) {
  const auto& t = config.training;
  auto model = make_model(config, comm, prefetch);
  ShardedState state(*model);
  const optim::AdamW adamw({t.beta1, t.beta2, t.eps, t.weight_decay});
  const optim::LrSchedule schedule({t.lr, t.min_lr, t.warmup_steps, t.max_steps, t.lr_schedule});
  const std::int64_t per_rank = t.global_batch_size / comm.size();
  Result result;
  for (int step = 1; step <= kSteps; ++step) {
    const StepSettings settings{step, per_rank, schedule.at(step), t.grad_clip, nullptr};
    const auto outcome = run_training_step(
        *model, state, adamw, settings,
        [&](std::int64_t micro) {
          const std::int64_t id = (step - 1) * t.global_batch_size + comm.rank() * per_rank + micro;
          return batch_of({id}, config.model.vocab_size, step, kSeed);
        },
        comm);
    EXPECT_FALSE(outcome.skipped);
    result.losses.push_back(outcome.loss);
  }
  result.masters = gather_trainable(*model, [](fsdp::ShardedUnit& unit) { return unit.master(); });
  return result;
}

void expect_bitwise(const Result& expected, const Result& actual, const std::string& what) {
  ASSERT_EQ(expected.losses.size(), actual.losses.size());
  for (std::size_t s = 0; s < expected.losses.size(); ++s)
    EXPECT_EQ(expected.losses[s], actual.losses[s]) << what << ", step " << s + 1;
  ASSERT_EQ(expected.masters.size(), actual.masters.size());
  for (const auto& [name, tensor] : expected.masters)
    EXPECT_TRUE(torch::equal(tensor, actual.masters.at(name))) << what << ": " << name;
}

const Case kCases[] = {{"full fine-tuning"},
                       {"tied embeddings", true},
                       {"LoRA with dropout", false, true},
                       {"QLoRA nf4", false, true, true},
                       {"QLoRA nf4, double quantisation, tied", true, true, true, true}};

// The units' options of `config`'s plan on the CPU.
fsdp::ShardOptions cpu_options(const config::Config& config) {
  return shard_options(plan::make_run_plan(config, DeviceKind::kCpu, 1), torch::kCPU);
}

TEST(Reshard, ShardOptionsFollowTheConfig) {
  config::Config config = make_config({"default"}, config::ReshardPolicy::kAuto);
  EXPECT_TRUE(cpu_options(config).reshard_after_forward);
  config.parallel.reshard_after_forward = config::ReshardPolicy::kFalse;
  EXPECT_FALSE(cpu_options(config).reshard_after_forward);
  EXPECT_EQ(cpu_options(config).recompute, config::Recompute::kFull);
  config.parallel.reshard_after_forward = config::ReshardPolicy::kAuto;
  config.training.activation_checkpointing = config::Recompute::kSelective;
  EXPECT_EQ(cpu_options(config).recompute, config::Recompute::kSelective);
  EXPECT_TRUE(cpu_options(config).reshard_after_forward);
  config.training.activation_checkpointing = config::Recompute::kNone;
  EXPECT_FALSE(cpu_options(config).reshard_after_forward);
}

// Keeping the gathered parameters changes when they are gathered, never what
// the unit computes from them.
TEST(Reshard, KeepingTheParametersTrainsBitwiseTheSame) {
  auto comm = comm::MpiCommunicator::create(MPI_COMM_WORLD);
  for (const Case& c : kCases) {
    const Result resharded = train(make_config(c, config::ReshardPolicy::kTrue), *comm, false);
    const config::Config kept = make_config(c, config::ReshardPolicy::kFalse);
    expect_bitwise(resharded, train(kept, *comm, false), c.name);
    expect_bitwise(resharded, train(kept, *comm, true), std::string(c.name) + " with prefetch");
  }
}

struct Traffic {
  double bytes = 0;  // all-gathers and reduce-scatters
  std::uint64_t gathers = 0;
};

// One micro-step's forward and backward, and the traffic of its unit collectives.
Traffic micro_step_traffic(const config::Config& config, comm::Communicator& comm, bool prefetch) {
  auto model = make_model(config, comm, prefetch);
  comm.reset_stats();
  const auto batch = batch_of({comm.rank()}, config.model.vocab_size, 1, kSeed);
  model->loss(batch.inputs, batch.targets, batch.target_mask, &batch.randomness).backward();
  model->finish_collectives();  // a prefetch nobody took would have been counted
  const auto stats = comm.stats();
  return {stats[comm::CollectiveKind::kAllGather].bytes +
              stats[comm::CollectiveKind::kReduceScatter].bytes,
          stats[comm::CollectiveKind::kAllGather].calls};
}

// docs/architecture.md: bytes = (N-1)/N x (k (Psi_all b + Q) + Psi_trainable 4)
// with k = 1 gather per unit and micro-step instead of 2 (a tied embedding
// counts once more in the head; the frozen embedding is gathered once either way).
TEST(Reshard, KeptParametersAreGatheredOncePerMicroStep) {
  auto comm = comm::MpiCommunicator::create(MPI_COMM_WORLD);
  for (const Case& c : kCases) {
    const config::Config kept = make_config(c, config::ReshardPolicy::kFalse);
    const Traffic once = micro_step_traffic(kept, *comm, false);
    const Traffic twice =
        micro_step_traffic(make_config(c, config::ReshardPolicy::kTrue), *comm, false);
    // A backward prefetch for a unit that kept its parameters would gather more.
    const Traffic prefetched = micro_step_traffic(kept, *comm, true);

    ShardedLlama layouts(kept.model, kept.training.lora, false, *comm, {}, torch::kCPU, kSeqLen);
    double psi_all = 0, psi_trainable = 0, nf4 = 0;
    for (const auto& unit : layouts.units()) {
      const auto& layout = unit->layout();
      psi_all += static_cast<double>(layout.padded(true) + layout.padded(false));
      psi_trainable += static_cast<double>(layout.padded(true));
      nf4 += static_cast<double>(
          quant::nf4_storage(layout.quantized_padded(), c.double_quant).total());
    }
    if (c.tied) {
      const auto& embedding = layouts.units()[0]->layout();
      psi_all += static_cast<double>(embedding.padded(true) + embedding.padded(false));
      psi_trainable += static_cast<double>(embedding.padded(true));
    }
    const double n = comm->size();
    EXPECT_DOUBLE_EQ(once.bytes, (n - 1) / n * (psi_all * 4 + nf4 + psi_trainable * 4)) << c.name;
    EXPECT_LT(once.gathers, twice.gathers) << c.name;
    if (comm->size() > 1) {
      EXPECT_LT(once.bytes, twice.bytes) << c.name;
    }
    EXPECT_EQ(prefetched.gathers, once.gathers) << c.name;
    EXPECT_DOUBLE_EQ(prefetched.bytes, once.bytes) << c.name;
  }
}

// LoRA's B starts at zero, which would leave A without gradient.
void set_lora_b(ShardedLlama& model) {
  torch::NoGradGuard no_grad;
  for (auto& unit : model.units())
    for (const auto& piece : unit->layout().shard_pieces(true, unit->comm().rank()))
      if (unit->layout().params()[piece.param].name.find("lora_B") != std::string::npos)
        unit->master()
            .narrow(0, piece.shard_offset, piece.length)
            .copy_(0.05 * torch::sin(0.37 * torch::arange(piece.tensor_offset,
                                                          piece.tensor_offset + piece.length,
                                                          torch::kFloat64) +
                                     1.0)
                              .to(torch::kFloat32));
}

// The private gradient of one step over 8 examples, 2 per micro-batch.
std::map<std::string, torch::Tensor> private_gradient(const config::Config& config,
                                                      comm::Communicator& comm) {
  auto model = make_model(config, comm, false);
  set_lora_b(*model);
  ShardedState state(*model);
  const std::int64_t per_rank = 8 / comm.size();
  PrivateStepSettings settings;
  settings.micro_steps = per_rank / 2;
  settings.max_grad_norm = 0.02;
  settings.expected_batch = 8;
  const StepOutcome outcome = private_gradients(
      *model, state, settings,
      [&](std::int64_t micro) {
        const std::int64_t first = comm.rank() * per_rank + 2 * micro;
        return batch_of({first, first + 1}, config.model.vocab_size, 1, kSeed, /*masked=*/true);
      },
      comm);
  EXPECT_FALSE(outcome.skipped);
  return gather_trainable(*model, [](fsdp::ShardedUnit& unit) {
    const torch::Tensor grad = unit.master().grad();
    return grad.defined() ? grad : torch::zeros_like(unit.master());
  });
}

// DP-SGD's per-example leaves are expansions of the same kept buffers.
TEST(Reshard, PrivateGradientIsBitwiseTheSame) {
  auto comm = comm::MpiCommunicator::create(MPI_COMM_WORLD);
  for (const Case& c :
       {Case{"LoRA with dropout", false, true}, Case{"QLoRA nf4, tied", true, true, true, true}}) {
    config::Config resharded = make_config(c, config::ReshardPolicy::kTrue);
    resharded.privacy.enabled = true;
    config::Config kept = resharded;
    kept.parallel.reshard_after_forward = config::ReshardPolicy::kFalse;
    const auto expected = private_gradient(resharded, *comm);
    const auto actual = private_gradient(kept, *comm);
    ASSERT_EQ(expected.size(), actual.size());
    double largest = 0;
    for (const auto& [name, grad] : expected) {
      largest = std::max(largest, grad.abs().max().item<double>());
      EXPECT_TRUE(torch::equal(grad, actual.at(name))) << c.name << ": " << name;
    }
    EXPECT_GT(largest, 0) << c.name;
  }
}

}  // namespace
}  // namespace nss::train

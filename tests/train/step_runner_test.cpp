// The step runners: each runs as many micro-batches as its batches say the
// step has (the loader's count, never the configuration's), and gives the
// step its kind's function computes; the trainer's choice follows the plan,
// with its kind's rules for steps without targets and its figures.
#include "train/step_runner.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "comm/local_communicator.h"
#include "config/load.h"
#include "model/initial_weights.h"
#include "tiny_batches.h"
#include "train/private_training.h"
#include "train/training_step_runner.h"

namespace nss::train {
namespace {

using testing::batch_of;
using testing::kSeqLen;

config::Config tiny_config(bool lora) {
  config::Config config = config::parse_config_text(R"(
model: {preset: tiny, hidden_size: 32, intermediate_size: 64, num_hidden_layers: 2,
        num_attention_heads: 4, num_key_value_heads: 2, head_dim: 8, vocab_size: 300}
data: {seq_len: 12}
training: {global_batch_size: 6, micro_batch_size: 2, lr: 0.01, warmup_steps: 1, grad_clip: 1.0}
privacy: {noise_multiplier: 1.0, max_grad_norm: 0.5}
)",
                                                    "test");
  config.training.lora.enabled = lora;
  config.privacy.enabled = lora;
  return config;
}

// A model, its state and optimizer on one rank.
struct Training {
  explicit Training(const config::Config& config)
      : comm(1),
        model(config.model, config.training.lora, false, comm, {}, torch::kCPU, kSeqLen),
        adamw(adamw_of(config.training)) {
    model.initialize(model::InitialWeights(config.model, config.training.lora, 7));
    state = std::make_unique<ShardedState>(model);
  }
  StepParts parts() { return {model, *state, adamw, comm}; }

  comm::LocalCommunicator comm;
  ShardedLlama model;
  std::unique_ptr<ShardedState> state;
  optim::AdamW adamw;
};

// Micro-batch `micro` of step 1, its step of `micro_steps`.
MicroBatchTensors micro_batch(const config::Config& config, std::int64_t micro,
                              std::int64_t micro_steps) {
  MicroBatchTensors batch = batch_of({2 * micro, 2 * micro + 1}, config.model.vocab_size, 1, 3);
  batch.micro_steps = micro_steps;
  return batch;
}

// A source of `micro_steps` micro-batches that counts what was read.
MicroBatchSource counted(const config::Config& config, std::int64_t micro_steps,
                         std::int64_t& reads) {
  return [&config, micro_steps, &reads] { return micro_batch(config, reads++, micro_steps); };
}

TEST(StepRunner, OrdinaryStepReadsTheBatchesCountOfMicroSteps) {
  const config::Config config = tiny_config(false);
  for (const std::int64_t micro_steps : {1, 3}) {
    Training by_runner(config), direct(config);
    OrdinaryStepRunner runner(by_runner.parts(), config.training.grad_clip);
    std::int64_t reads = 0;
    const StepOutcome outcome = runner.run(1, 0.01, counted(config, micro_steps, reads), {});
    EXPECT_EQ(reads, micro_steps);
    const StepOutcome expected = run_training_step(
        direct.model, *direct.state, direct.adamw, {1, micro_steps, 0.01, 1.0, {}},
        [&](std::int64_t micro) { return micro_batch(config, micro, micro_steps); }, direct.comm);
    EXPECT_EQ(outcome.loss, expected.loss);
    EXPECT_EQ(outcome.grad_norm, expected.grad_norm);
    for (std::size_t u = 0; u < by_runner.model.units().size(); ++u)
      EXPECT_TRUE(
          torch::equal(by_runner.model.units()[u]->master(), direct.model.units()[u]->master()))
          << "unit " << u;
  }
}

TEST(StepRunner, PrivateStepReadsTheBatchesCountOfMicroStepsWithTheRunsKey) {
  const config::Config config = tiny_config(true);
  Training by_runner(config), direct(config);
  PrivateTraining privacy(config, 60, by_runner.comm);
  privacy.load(std::nullopt);  // a fresh start draws the key
  PrivateStepRunner runner(by_runner.parts(), privacy);
  std::int64_t reads = 0;
  const StepOutcome outcome = runner.run(1, 0.01, counted(config, 3, reads), {});
  EXPECT_EQ(reads, 3);
  const StepOutcome expected = run_private_step(
      direct.model, *direct.state, direct.adamw, privacy.step_settings(1, 3, 0.01, {}),
      [&](std::int64_t micro) { return micro_batch(config, micro, 3); }, direct.comm);
  EXPECT_EQ(outcome.loss, expected.loss);
  EXPECT_EQ(outcome.grad_norm, expected.grad_norm);
  EXPECT_FALSE(runner.skips_steps_without_targets());
}

TEST(StepRunner, TheTrainerChoosesTheKindByThePlan) {
  for (const bool private_run : {false, true}) {
    const config::Config config = tiny_config(private_run);
    Training training(config);
    const plan::RunPlan plan = plan::make_run_plan(config, DeviceKind::kCpu, 1);
    const auto runner =
        make_training_step_runner(config, plan, training.parts(), training.comm, 60);
    EXPECT_EQ(runner->skips_steps_without_targets(), !private_run);
    StepRecord record;
    record.step = 4;
    runner->annotate(record);
    EXPECT_EQ(record.epsilon.has_value(), private_run);
    if (private_run) {
      const PrivateTraining reference(config, 60, training.comm);
      EXPECT_DOUBLE_EQ(*record.epsilon, reference.epsilon_after(4));
    }
  }
}

}  // namespace
}  // namespace nss::train

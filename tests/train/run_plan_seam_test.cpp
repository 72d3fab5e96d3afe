// The runtime and the preflight's memory model read one run plan: change a
// field of a plan and both the model the trainer builds (its units' options,
// its attention layout, its measured step on the counting allocator) and the
// memory model's prediction follow it.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "comm/local_communicator.h"
#include "config/load.h"
#include "memory/memory_meter.h"
#include "preflight/memory_model.h"
#include "tiny_batches.h"
#include "train/compute_device.h"
#include "train/sharded_llama.h"
#include "train/synthetic_step.h"
#include "train/training_step.h"

namespace nss::train {
namespace {

config::Config small_config() {
  return config::parse_config_text(R"(
model: {preset: tiny, hidden_size: 64, intermediate_size: 128, num_hidden_layers: 2,
        num_attention_heads: 4, num_key_value_heads: 2, head_dim: 16, vocab_size: 2048}
data: {seq_len: 64}
training: {global_batch_size: 8, micro_batch_size: 2, lr: 0.01, warmup_steps: 1}
)",
                                   "test");
}

// One step's peak as the synthetic step measures it and as the memory model
// predicts it, both under `plan`.
struct Peaks {
  std::int64_t measured = 0;
  std::uint64_t predicted = 0;
};

Peaks peaks_under(const config::Config& config, const plan::RunPlan& plan,
                  const std::vector<std::int64_t>& packed_row_spans = {}) {
  const auto meter = memory::make_memory_meter(torch::kCPU);
  SyntheticStepRequest request;
  request.micro_batch_size = config.training.micro_batch_size;
  request.micro_steps = 2;
  request.packed_row_spans = packed_row_spans;
  Peaks peaks;
  {
    SyntheticTraining training(config, plan, *meter);
    peaks.measured = training.run(request).peak_bytes;
  }
  peaks.predicted = preflight::predict_step_memory(config, plan, config.training.micro_batch_size,
                                                   packed_row_spans)
                        .peak_bytes;
  return peaks;
}

// The plan change moved the measured peak, and the prediction moved the same way.
void expect_both_moved(const Peaks& before, const Peaks& after) {
  ASSERT_NE(after.measured, before.measured);
  EXPECT_EQ(after.measured > before.measured, after.predicted > before.predicted)
      << "measured " << before.measured << " -> " << after.measured << ", predicted "
      << before.predicted << " -> " << after.predicted;
  EXPECT_NE(after.predicted, before.predicted);
}

TEST(RunPlanSeam, PrefetchFollowsThePlan) {
  const config::Config config = small_config();
  comm::LocalCommunicator comm(2);
  plan::RunPlan plan = plan::make_run_plan(config, DeviceKind::kCpu, 2);
  std::uint64_t predicted[2] = {};
  for (const bool prefetch : {false, true}) {
    plan.prefetch = prefetch;
    ShardedLlama model(config.model, config.training.lora, false, comm, plan, torch::kCPU,
                       config.data.seq_len);
    for (const auto& unit : model.units()) EXPECT_EQ(unit->options().prefetch, prefetch);
    predicted[prefetch] = preflight::predict_step_memory(config, plan, 2).peak_bytes;
  }
  // A prefetched gather holds a second unit's parameters.
  EXPECT_GT(predicted[1], predicted[0]);
}

TEST(RunPlanSeam, PackedAttentionFollowsThePlan) {
  config::Config config = small_config();
  config.data.packing = config::Packing::kDocuments;
  const std::vector<std::int64_t> spans = {16, 16, 16, 16};
  plan::RunPlan plan = plan::make_run_plan(config, DeviceKind::kCpu, 1);
  ASSERT_EQ(plan.packed_attention, plan::PackedAttention::kPerDocument);
  comm::LocalCommunicator comm(1);
  const auto batch = testing::batch_of({0, 1}, config.model.vocab_size, 1, 1, false, true);
  Peaks per_document, masked;
  for (const auto how : {plan::PackedAttention::kPerDocument, plan::PackedAttention::kMask}) {
    plan.packed_attention = how;
    const ShardedLlama model(config.model, config.training.lora, false, comm, plan, torch::kCPU,
                             config.data.seq_len);
    const auto documents = document_mask_of(batch, model.plan().packed_attention);
    ASSERT_TRUE(documents.has_value());
    EXPECT_EQ(documents->allowed.defined(), how == plan::PackedAttention::kMask);
    EXPECT_EQ(documents->spans.empty(), how == plan::PackedAttention::kMask);
    (how == plan::PackedAttention::kMask ? masked : per_document) =
        peaks_under(config, plan, spans);
  }
  // Four documents a row: the mask computes every score of the row and holds
  // the [B, 1, S, S] mask; the slices compute a quarter of them.
  EXPECT_GT(masked.measured, per_document.measured);
  expect_both_moved(per_document, masked);
}

TEST(RunPlanSeam, LossChunkingFollowsThePlan) {
  const config::Config config = small_config();
  plan::RunPlan plan = plan::make_run_plan(config, DeviceKind::kCpu, 1);
  plan.loss_chunk_tokens = 0;
  const Peaks whole = peaks_under(config, plan);
  plan.loss_chunk_tokens = 32;
  const Peaks chunked = peaks_under(config, plan);
  // B x S x vocab logits at once against 32 x vocab at a time.
  EXPECT_LT(chunked.measured, whole.measured);
  expect_both_moved(whole, chunked);
}

TEST(RunPlanSeam, PerExampleGradientsFollowThePlan) {
  config::Config config = small_config();
  config.training.lora.enabled = true;
  config.privacy.enabled = true;
  config.privacy.noise_multiplier = 1.0;
  plan::RunPlan plan = plan::make_run_plan(config, DeviceKind::kCpu, 1);
  ASSERT_TRUE(plan.per_example);
  const Peaks per_example = peaks_under(config, plan);
  plan.per_example = false;
  // DP-SGD holds each example's adapter gradients and their clipped sums
  // but reads its micro-batches one by one.
  expect_both_moved(per_example, peaks_under(config, plan));
}

// Whether attention is fused is this build's libtorch, one rule for the
// model's code and the plan: libtorch 2 attends through
// scaled_dot_product_attention, and the memory model then counts no scores,
// which this build's measured step agrees with (the other build's count is
// checked against GPU measurements, preflight_fused_attention_memory_test).
TEST(RunPlanSeam, FusedAttentionIsThisLibtorchs) {
  EXPECT_EQ(plan::fused_attention_built(), TORCH_VERSION_MAJOR >= 2);
  const config::Config config = small_config();
  const plan::RunPlan plan = plan::make_run_plan(config, DeviceKind::kCpu, 2);
  EXPECT_EQ(plan.fused_attention, plan::fused_attention_built());
  const Peaks peaks = peaks_under(config, plan);
  EXPECT_NEAR(static_cast<double>(peaks.predicted) / static_cast<double>(peaks.measured), 1.0,
              0.05);
}

}  // namespace
}  // namespace nss::train

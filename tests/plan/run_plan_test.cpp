// The run plan's rules, each decided here once: what a configuration means
// on the CPU and on a GPU, the switches, and the prefetch order.
#include "plan/run_plan.h"

#include <gtest/gtest.h>

namespace nss::plan {
namespace {

constexpr Switches kNoSwitches{};
constexpr Switches kVarlen{true};

TEST(RunPlan, CpuComputesFp32WithoutPrefetchOrOffload) {
  config::Config config;
  config.parallel.offload_optimizer = true;  // refused on the CPU by the trainer; no effect here
  config.data.packing = config::Packing::kDocuments;
  const RunPlan plan = make_run_plan(config, DeviceKind::kCpu, 4, kVarlen);
  EXPECT_EQ(plan.device, DeviceKind::kCpu);
  EXPECT_EQ(plan.world_size, 4);
  EXPECT_EQ(plan.shard_ranks, 4);
  EXPECT_EQ(plan.compute_dtype, config::ComputeDtype::kFp32);
  EXPECT_EQ(plan.compute_bytes(), 4);
  EXPECT_FALSE(plan.prefetch);
  EXPECT_FALSE(plan.offload_optimizer);
  EXPECT_TRUE(plan.packed);
  // The variable-length kernels run on GPUs only.
  EXPECT_EQ(plan.packed_attention, PackedAttention::kPerDocument);
}

TEST(RunPlan, GpuComputesBf16WithPrefetchAndTheMask) {
  config::Config config;
  config.parallel.offload_optimizer = true;
  config.parallel.shard_group_size = 2;
  const RunPlan plan = make_run_plan(config, DeviceKind::kCuda, 8, kNoSwitches);
  EXPECT_EQ(plan.compute_dtype, config::ComputeDtype::kBf16);
  EXPECT_EQ(plan.element_type(), DType::kBFloat16);
  EXPECT_EQ(plan.compute_bytes(), 2);
  EXPECT_TRUE(plan.prefetch);
  EXPECT_TRUE(plan.offload_optimizer);
  EXPECT_EQ(plan.shard_ranks, 2);
  EXPECT_FALSE(plan.packed);
  EXPECT_EQ(plan.packed_attention, PackedAttention::kMask);
  EXPECT_EQ(make_run_plan(config, DeviceKind::kCuda, 8, kVarlen).packed_attention,
            PackedAttention::kVarlen);
  config.training.dtype = config::ComputeDtype::kFp32;
  EXPECT_EQ(make_run_plan(config, DeviceKind::kCuda, 8, kNoSwitches).compute_bytes(), 4);
}

TEST(RunPlan, ResolvesRecomputeReshardingChunkingAndPrivacy) {
  config::Config config;
  config.training.activation_checkpointing = config::Recompute::kSelective;
  config.training.loss_chunk_tokens = 512;
  config.privacy.enabled = true;
  RunPlan plan = make_run_plan(config, DeviceKind::kCpu, 1, kNoSwitches);
  EXPECT_EQ(plan.recompute, config::Recompute::kSelective);
  EXPECT_TRUE(plan.recomputes());
  EXPECT_TRUE(plan.reshard_after_forward);  // auto: true when recomputing
  EXPECT_EQ(plan.loss_chunk_tokens, 512);
  EXPECT_TRUE(plan.per_example);
  config.training.activation_checkpointing = config::Recompute::kNone;
  plan = make_run_plan(config, DeviceKind::kCpu, 1, kNoSwitches);
  EXPECT_FALSE(plan.recomputes());
  EXPECT_FALSE(plan.reshard_after_forward);
  config.parallel.reshard_after_forward = config::ReshardPolicy::kTrue;
  EXPECT_TRUE(make_run_plan(config, DeviceKind::kCpu, 1, kNoSwitches).reshard_after_forward);
}

TEST(RunPlan, PrefetchOrderFollowsForwardAndBackward) {
  RunPlan plan;
  plan.prefetch = true;
  const int units = 4;  // embedding, two blocks, head
  EXPECT_EQ(plan.forward_prefetch(0, units), 1);
  EXPECT_EQ(plan.forward_prefetch(2, units), 3);
  EXPECT_EQ(plan.forward_prefetch(3, units), -1);
  EXPECT_EQ(plan.backward_prefetch(3, true), 2);
  EXPECT_EQ(plan.backward_prefetch(2, false), 1);
  // The embedding's backward runs only when it trains.
  EXPECT_EQ(plan.backward_prefetch(1, true), 0);
  EXPECT_EQ(plan.backward_prefetch(1, false), -1);
  EXPECT_EQ(plan.backward_prefetch(0, true), -1);
  plan.prefetch = false;
  EXPECT_EQ(plan.forward_prefetch(0, units), -1);
  EXPECT_EQ(plan.backward_prefetch(3, true), -1);
}

TEST(RunPlan, VarlenSwitchNeedsTheKernelInThisBuild) {
  if (!varlen_attention_built()) {
    EXPECT_FALSE(environment_switches().varlen_attention);
  }
  EXPECT_EQ(packed_attention(DeviceKind::kCpu, kVarlen), PackedAttention::kPerDocument);
  EXPECT_EQ(packed_attention(DeviceKind::kCuda, kNoSwitches), PackedAttention::kMask);
}

}  // namespace
}  // namespace nss::plan

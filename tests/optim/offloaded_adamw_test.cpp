#include "optim/offloaded_adamw.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include "core/error.h"
#include "optim/adamw.h"

namespace nss::optim {
namespace {

using Ranges = std::vector<ElementRange>;

const AdamWOptions kOptions{0.9, 0.95, 1e-8, 0.1};

struct ShardSpec {
  std::int64_t elements;
  Ranges decay_ranges;
  std::vector<int> steps_without_gradient;
};

// One shard twice: AdamW's state on the device, and the offloaded state (its
// master and moments on the host, its gradient and compute-dtype copy on the
// device), from the same start.
struct TwinShard {
  torch::Tensor param, exp_avg, exp_avg_sq;  // AdamW, on the device
  torch::Tensor master, host_exp_avg, host_exp_avg_sq, grad, compute;
  ShardSpec spec;

  TwinShard(const ShardSpec& s, torch::Device device, torch::Dtype dtype) : spec(s) {
    const torch::Tensor init = torch::randn({s.elements});
    param = init.to(device).requires_grad_(true);
    exp_avg = torch::zeros({s.elements}, torch::TensorOptions().device(device));
    exp_avg_sq = torch::zeros_like(exp_avg);
    master = OffloadedAdamW::host_tensor(s.elements).copy_(init);
    host_exp_avg = OffloadedAdamW::host_tensor(s.elements).zero_();
    host_exp_avg_sq = OffloadedAdamW::host_tensor(s.elements).zero_();
    compute = init.to(device, dtype);
  }

  void set_gradient(int step, torch::Device device) {
    const bool without =
        std::find(spec.steps_without_gradient.begin(), spec.steps_without_gradient.end(), step) !=
        spec.steps_without_gradient.end();
    if (without) {
      param.mutable_grad() = torch::Tensor();
      grad = torch::Tensor();
      return;
    }
    const torch::Tensor g = torch::randn({spec.elements});
    param.mutable_grad() = g.to(device);
    grad = g.to(device);
  }
};

bool same_bits(const torch::Tensor& a, const torch::Tensor& b) {
  return a.scalar_type() == b.scalar_type() && torch::equal(a.cpu(), b.cpu());
}

// Several steps of OffloadedAdamW with chunks of `chunk_elements` against
// AdamW on `device`: masters and moments bitwise equal, the compute-dtype
// copy bitwise master.to(dtype), after every step.
void expect_same_as_adamw(const std::vector<ShardSpec>& specs, torch::Device device,
                          torch::Dtype dtype, std::int64_t chunk_elements) {
  SCOPED_TRACE("chunk elements " + std::to_string(chunk_elements) + ", " +
               std::string(c10::toString(dtype)) + " on " + device.str());
  torch::manual_seed(3);
  std::vector<TwinShard> twins;
  for (const ShardSpec& spec : specs) twins.emplace_back(spec, device, dtype);
  const AdamW adamw(kOptions);
  OffloadedAdamW offloaded(kOptions, chunk_elements * 24);
  ASSERT_EQ(offloaded.chunk_elements(), chunk_elements);
  for (int step = 1; step <= 4; ++step) {
    const double lr = 0.01 * step;  // a schedule's changing rate
    std::vector<AdamWShard> reference;
    std::vector<OffloadedShard> shards;
    for (TwinShard& t : twins) {
      t.set_gradient(step, device);
      reference.push_back({&t.param, &t.exp_avg, &t.exp_avg_sq, t.spec.decay_ranges});
      shards.push_back({&t.master, &t.host_exp_avg, &t.host_exp_avg_sq, &t.grad, &t.compute,
                        t.spec.decay_ranges});
    }
    adamw.step(reference, lr, step);
    offloaded.step(shards, lr, step);
    for (std::size_t i = 0; i < twins.size(); ++i) {
      const TwinShard& t = twins[i];
      SCOPED_TRACE("step " + std::to_string(step) + ", shard " + std::to_string(i));
      EXPECT_TRUE(same_bits(t.master, t.param.detach()));
      EXPECT_TRUE(same_bits(t.host_exp_avg, t.exp_avg));
      EXPECT_TRUE(same_bits(t.host_exp_avg_sq, t.exp_avg_sq));
      EXPECT_TRUE(same_bits(t.compute, t.param.detach().to(dtype)));
      EXPECT_TRUE(t.compute.device() == device);
    }
  }
  EXPECT_LE(offloaded.staging_bytes_allocated(), chunk_elements * 24);
}

// Decay ranges that straddle chunk boundaries at most chunk sizes, shards
// without decay, of 0 and 1 elements, and shards that skip a step.
std::vector<ShardSpec> cpu_shards() {
  return {{1000, {{0, 100}, {250, 1000}}, {}}, {0, {}, {}},           {37, {{0, 37}}, {2}},
          {513, {{10, 20}, {30, 513}}, {}},    {1, {{0, 1}}, {1, 3}}, {300, {}, {4}}};
}

TEST(OffloadedAdamW, EqualsAdamWBitwiseOnTheCpu) {
  // 1 and 7 divide no shard, 100 divides 1000 and 300, 1000 holds the
  // largest shard whole, 4096 holds every shard whole.
  for (const torch::Dtype dtype : {torch::kFloat32, torch::kBFloat16})
    for (const std::int64_t chunk : {1, 7, 64, 100, 1000, 4096})
      expect_same_as_adamw(cpu_shards(), torch::kCPU, dtype, chunk);
}

TEST(OffloadedAdamW, StagingHoldsOnlyWhatTheChunksNeed) {
  OffloadedAdamW offloaded(kOptions, std::int64_t{1} << 30);
  EXPECT_EQ(offloaded.staging_bytes_allocated(), 0);
  torch::Tensor master = OffloadedAdamW::host_tensor(10).zero_();
  torch::Tensor m = torch::zeros({10}), v = torch::zeros({10}), compute = torch::zeros({10});
  torch::Tensor grad;
  const std::vector<OffloadedShard> shards = {{&master, &m, &v, &grad, &compute, {}}};
  offloaded.step(shards, 0.1, 1);  // no gradient: nothing staged, nothing changed
  EXPECT_EQ(offloaded.staging_bytes_allocated(), 0);
  EXPECT_TRUE(torch::equal(master, torch::zeros({10})));
  grad = torch::ones({10});
  offloaded.step(shards, 0.1, 1);
  EXPECT_EQ(offloaded.staging_bytes_allocated(), 10 * 12);  // one chunk, one slot
  EXPECT_FALSE(torch::equal(master, torch::zeros({10})));
  EXPECT_TRUE(torch::equal(compute, master));
}

TEST(OffloadedAdamW, HostTensorsArePinnedOnlyWithCuda) {
  const torch::Tensor t = OffloadedAdamW::host_tensor(5);
  EXPECT_TRUE(t.is_cpu());
  EXPECT_EQ(t.scalar_type(), torch::kFloat32);
  EXPECT_EQ(t.numel(), 5);
  EXPECT_EQ(t.is_pinned(), torch::cuda::is_available());
}

TEST(OffloadedAdamW, MismatchedShardIsAnInternalError) {
  OffloadedAdamW offloaded(kOptions, 240);
  torch::Tensor master = torch::zeros({10}), m = torch::zeros({10}), v = torch::zeros({10});
  torch::Tensor short_grad = torch::ones({9}), compute = torch::zeros({10});
  EXPECT_THROW(offloaded.step({{&master, &m, &v, &short_grad, &compute, {}}}, 0.1, 1),
               InternalError);
  torch::Tensor grad = torch::ones({10}), half_master = torch::zeros({10}, torch::kBFloat16);
  EXPECT_THROW(offloaded.step({{&half_master, &m, &v, &grad, &compute, {}}}, 0.1, 1),
               InternalError);
  torch::Tensor short_compute = torch::zeros({5});
  EXPECT_THROW(offloaded.step({{&master, &m, &v, &grad, &short_compute, {}}}, 0.1, 1),
               InternalError);
  EXPECT_THROW(offloaded.step({{&master, &m, &v, &grad, &compute, {{0, 11}}}}, 0.1, 1),
               InternalError);
}

// The same comparison on a GPU: device gradients and compute copies, pinned
// host state, the fused kernel on both sides, chunks small enough that both
// slots are reused many times (a missing wait shows up as wrong bits).
TEST(OffloadedAdamW, EqualsAdamWBitwiseOnCuda) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const std::vector<ShardSpec> shards = {{100003, {{0, 50000}, {70000, 100003}}, {}},
                                         {0, {}, {}},
                                         {4097, {{1, 4096}}, {2}},
                                         {1 << 20, {{0, 1 << 20}}, {}},
                                         {1, {}, {3}}};
  for (const torch::Dtype dtype : {torch::kFloat32, torch::kBFloat16})
    for (const std::int64_t chunk :
         {std::int64_t{4093}, std::int64_t{1} << 16, std::int64_t{1} << 22})
      expect_same_as_adamw(shards, torch::Device(torch::kCUDA, 0), dtype, chunk);
}

}  // namespace
}  // namespace nss::optim

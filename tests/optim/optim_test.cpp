#include <cmath>

#include <gtest/gtest.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include "comm/local_communicator.h"
#include "core/error.h"
#include "optim/adamw.h"
#include "optim/grad_clip.h"
#include "optim/lr_schedule.h"

namespace nss::optim {
namespace {

struct State {
  torch::Tensor param, exp_avg, exp_avg_sq;
  explicit State(torch::Tensor p)
      : param(p.requires_grad_(true)),
        exp_avg(torch::zeros_like(p)),
        exp_avg_sq(torch::zeros_like(p)) {}
};

AdamWShard make_shard(State& s, std::vector<std::pair<std::int64_t, std::int64_t>> ranges) {
  return {&s.param, &s.exp_avg, &s.exp_avg_sq, std::move(ranges)};
}

TEST(AdamW, MatchesHandComputedSteps) {
  State s(torch::tensor({1.0f}));
  AdamW adamw({0.9, 0.999, 1e-8, 0.1});
  s.param.mutable_grad() = torch::tensor({0.5f});
  adamw.step({make_shard(s, {{0, 1}})}, 0.1, 1);
  // p = 1 * (1 - 0.01) - (0.1 / 0.1) * 0.05 / (0.5 + 1e-8)
  EXPECT_NEAR(s.param.item<float>(), 0.89, 1e-6);
  adamw.step({make_shard(s, {{0, 1}})}, 0.1, 2);
  // p = 0.89 * 0.99 - (0.1 / 0.19) * 0.095 / 0.5
  EXPECT_NEAR(s.param.item<float>(), 0.7811, 1e-6);
  EXPECT_NEAR(s.exp_avg.item<float>(), 0.095, 1e-7);
  EXPECT_NEAR(s.exp_avg_sq.item<float>(), 0.00049975, 1e-9);
}

TEST(AdamW, MatchesLibtorchAdamWWithDecayEverywhere) {
  torch::manual_seed(0);
  const auto init = torch::randn({257});
  State s(init.clone());
  auto reference = init.clone().requires_grad_(true);
  torch::optim::AdamW torch_adamw(
      {reference}, torch::optim::AdamWOptions(0.01).betas({0.9, 0.95}).eps(1e-8).weight_decay(0.1));
  AdamW adamw({0.9, 0.95, 1e-8, 0.1});
  for (int step = 1; step <= 5; ++step) {
    const auto grad = torch::randn({257});
    s.param.mutable_grad() = grad.clone();
    reference.mutable_grad() = grad.clone();
    adamw.step({make_shard(s, {{0, 257}})}, 0.01, step);
    torch_adamw.step();
  }
  EXPECT_LT((s.param - reference).abs().max().item<float>(), 1e-6);
}

// On a GPU the update is one fused kernel: the same steps as the generic path
// on the CPU, decay ranges included, to fp32 rounding.
TEST(AdamW, FusedCudaUpdateMatchesTheGenericPath) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  torch::manual_seed(0);
  const auto init = torch::randn({100003});
  State cpu(init.clone());
  State gpu(init.clone().cuda());
  AdamW adamw({0.9, 0.95, 1e-8, 0.1});
  const std::vector<std::pair<std::int64_t, std::int64_t>> ranges = {{0, 50000}, {70000, 100003}};
  for (int step = 1; step <= 5; ++step) {
    const auto grad = torch::randn({100003});
    cpu.param.mutable_grad() = grad.clone();
    gpu.param.mutable_grad() = grad.cuda();
    adamw.step({make_shard(cpu, ranges)}, 0.01, step);
    adamw.step({make_shard(gpu, ranges)}, 0.01, step);
  }
  const auto relative = [](const torch::Tensor& got, const torch::Tensor& expected) {
    return ((got.cpu() - expected).abs().max() / expected.abs().max()).item<double>();
  };
  EXPECT_LT(relative(gpu.param.detach(), cpu.param.detach()), 1e-6);
  EXPECT_LT(relative(gpu.exp_avg, cpu.exp_avg), 1e-6);
  EXPECT_LT(relative(gpu.exp_avg_sq, cpu.exp_avg_sq), 1e-6);
}

TEST(AdamW, WeightDecayOnlyInsideRanges) {
  State s(torch::ones({6}));
  s.param.mutable_grad() = torch::zeros({6});
  AdamW({0.9, 0.95, 1e-8, 0.5}).step({make_shard(s, {{1, 3}, {5, 6}})}, 0.1, 1);
  // Zero gradient: only the decay moves parameters, by a factor (1 - 0.1 * 0.5).
  const std::vector<float> expected = {1, 0.95f, 0.95f, 1, 1, 0.95f};
  for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(s.param[i].item<float>(), expected[i]) << i;
}

TEST(LrSchedule, WarmupThenDecays) {
  LrSchedule cosine({1.0, 0.1, 10, 110, config::LrSchedule::kCosine});
  EXPECT_DOUBLE_EQ(cosine.at(1), 0.1);
  EXPECT_DOUBLE_EQ(cosine.at(10), 1.0);
  EXPECT_NEAR(cosine.at(60), 0.55, 1e-12);  // halfway: min + (lr - min) / 2
  EXPECT_NEAR(cosine.at(110), 0.1, 1e-12);
  EXPECT_NEAR(cosine.at(200), 0.1, 1e-12);
  LrSchedule linear({1.0, 0.0, 0, 100, config::LrSchedule::kLinear});
  EXPECT_NEAR(linear.at(25), 0.75, 1e-12);
  LrSchedule constant({0.5, 0.0, 4, 100, config::LrSchedule::kConstant});
  EXPECT_DOUBLE_EQ(constant.at(2), 0.25);
  EXPECT_DOUBLE_EQ(constant.at(90), 0.5);
}

TEST(GradClip, GlobalNormAndClipping) {
  comm::LocalCommunicator comm(1);
  auto a = torch::zeros({2}).requires_grad_(true);
  auto b = torch::zeros({1}).requires_grad_(true);
  a.mutable_grad() = torch::tensor({3.0f, 0.0f});
  b.mutable_grad() = torch::tensor({4.0f});
  const double norm = global_grad_norm(comm, {&a, &b});
  EXPECT_DOUBLE_EQ(norm, 5.0);
  EXPECT_DOUBLE_EQ(clip_grads({&a, &b}, norm, 10.0), 1.0);
  const double factor = clip_grads({&a, &b}, norm, 1.0);
  EXPECT_NEAR(factor, 1.0 / (5.0 + 1e-6), 1e-12);
  EXPECT_NEAR(a.grad()[0].item<float>(), 0.6, 1e-6);
  EXPECT_NEAR(b.grad()[0].item<float>(), 0.8, 1e-6);
  EXPECT_DOUBLE_EQ(clip_grads({&a, &b}, std::nan(""), 1.0), 1.0);  // caller skips the step
}

}  // namespace
}  // namespace nss::optim

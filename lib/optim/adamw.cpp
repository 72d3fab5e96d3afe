#include "optim/adamw.h"

#include <cmath>

#include <torch/torch.h>

#include "optim/fused_adamw.h"

#if NSS_HAVE_CUDA
#include <c10/cuda/CUDAStream.h>
#endif

namespace nss::optim {
namespace {

// One fused kernel on CUDA for contiguous fp32 shards (optim/fused_adamw.h).
bool fused_update(const AdamWShard& shard, const torch::Tensor& grad, const FusedAdamWScalars& s) {
#if NSS_HAVE_CUDA
  torch::Tensor& param = *shard.param;
  const auto fits = [](const torch::Tensor& t) {
    return t.is_cuda() && t.scalar_type() == torch::kFloat32 && t.is_contiguous();
  };
  if (!fits(param) || !fits(grad) || !fits(*shard.exp_avg) || !fits(*shard.exp_avg_sq))
    return false;
  fused_adamw_update(param.data_ptr<float>(), grad.data_ptr<float>(),
                     shard.exp_avg->data_ptr<float>(), shard.exp_avg_sq->data_ptr<float>(),
                     param.numel(), s,
                     c10::cuda::getCurrentCUDAStream(param.device().index()).stream());
  return true;
#else
  (void)shard, (void)grad, (void)s;
  return false;
#endif
}

}  // namespace

void AdamW::step(const std::vector<AdamWShard>& shards, double lr, std::int64_t step) const {
  torch::NoGradGuard no_grad;
  const auto& o = options_;
  const double bias_correction1 = 1.0 - std::pow(o.beta1, static_cast<double>(step));
  const double bias_correction2 = 1.0 - std::pow(o.beta2, static_cast<double>(step));
  const double step_size = lr / bias_correction1;
  const double bias_correction2_sqrt = std::sqrt(bias_correction2);
  const FusedAdamWScalars scalars{
      static_cast<float>(o.beta1), static_cast<float>(o.beta2), static_cast<float>(step_size),
      static_cast<float>(bias_correction2_sqrt), static_cast<float>(o.eps)};
  for (const auto& shard : shards) {
    torch::Tensor& param = *shard.param;
    const torch::Tensor& grad = param.grad();
    if (!grad.defined() || param.numel() == 0) continue;
    // Decoupled weight decay, only where it applies (torch: param.mul_(1 - lr * wd)).
    if (o.weight_decay != 0) {
      torch::Tensor flat = param.view(-1);  // ranges are over the flattened elements
      for (const auto& [begin, end] : shard.decay_ranges)
        flat.narrow(0, begin, end - begin).mul_(1.0 - lr * o.weight_decay);
    }
    if (fused_update(shard, grad, scalars)) continue;
    shard.exp_avg->lerp_(grad, 1.0 - o.beta1);
    shard.exp_avg_sq->mul_(o.beta2).addcmul_(grad, grad, 1.0 - o.beta2);
    const torch::Tensor denom = (shard.exp_avg_sq->sqrt() / bias_correction2_sqrt).add_(o.eps);
    param.addcdiv_(*shard.exp_avg, denom, -step_size);
  }
}

}  // namespace nss::optim

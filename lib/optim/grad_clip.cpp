#include "optim/grad_clip.h"

#include <cmath>

#include <torch/torch.h>

namespace nss::optim {

double global_grad_norm(comm::Communicator& comm, const std::vector<at::Tensor*>& params) {
  double sum_of_squares = 0;
  for (const auto* param : params) {
    const auto& grad = param->grad();
    if (!grad.defined() || grad.numel() == 0) continue;
    // norm() reduces without materialising a squared copy of the gradient.
    const double norm = grad.norm().item<double>();
    sum_of_squares += norm * norm;
  }
  comm::CollectiveLabel label(comm, "gradient norm");
  comm.all_reduce(&sum_of_squares, 1, comm::ReduceOp::kSum);
  return std::sqrt(sum_of_squares);
}

double clip_grads(const std::vector<at::Tensor*>& params, double norm, double max_norm) {
  if (max_norm <= 0 || !std::isfinite(norm)) return 1.0;
  const double factor = max_norm / (norm + 1e-6);
  if (factor >= 1.0) return 1.0;
  torch::NoGradGuard no_grad;
  for (auto* param : params)
    if (param->grad().defined()) param->mutable_grad().mul_(factor);
  return factor;
}

}  // namespace nss::optim

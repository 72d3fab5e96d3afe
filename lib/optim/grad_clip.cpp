#include "optim/grad_clip.h"

#include <cmath>

#include <torch/torch.h>

namespace nss::optim {

double global_grad_norm(comm::Communicator& comm, const std::vector<at::Tensor*>& params,
                        const std::vector<std::vector<SharedElements>>* shared) {
  double sum_of_squares = 0;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const auto& grad = params[i]->grad();
    if (!grad.defined() || grad.numel() == 0) continue;
    // norm() reduces without materialising a squared copy of the gradient.
    const at::Tensor norm = grad.norm();
    if (!shared || i >= shared->size() || (*shared)[i].empty()) {
      const double value = norm.item<double>();
      sum_of_squares += value * value;
      continue;
    }
    // Shared elements' squares less their other copies' share, on the
    // device: one read of the host per parameter, as without them.
    at::Tensor squares = norm.to(at::kDouble).square();
    for (const SharedElements& elements : (*shared)[i])
      squares -= grad.narrow(0, elements.begin, elements.end - elements.begin)
                     .norm()
                     .to(at::kDouble)
                     .square() *
                 (1.0 - 1.0 / elements.copies);
    sum_of_squares += squares.item<double>();
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

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
    const double norm = grad.norm().item<double>();
    sum_of_squares += norm * norm;
    if (!shared || i >= shared->size()) continue;
    for (const SharedElements& elements : (*shared)[i]) {
      const double part =
          grad.narrow(0, elements.begin, elements.end - elements.begin).norm().item<double>();
      sum_of_squares -= part * part * (1.0 - 1.0 / elements.copies);
    }
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

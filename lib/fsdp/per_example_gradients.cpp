#include "fsdp/per_example_gradients.h"

#include <torch/torch.h>

#include "core/error.h"
#include "fsdp/sharded_unit.h"

namespace nss::fsdp {

PerExampleGradients::PerExampleGradients(double max_grad_norm) : max_grad_norm_(max_grad_norm) {
  NSS_ASSERT(max_grad_norm > 0, "fsdp", "per-example clipping needs a positive norm bound");
}

void PerExampleGradients::sum_norms_over(
    comm::Communicator* group,
    std::unordered_map<const ShardedUnit*, std::vector<double>> weights) {
  norm_group_ = group;
  norm_weights_ = std::move(weights);
}

void PerExampleGradients::add(ShardedUnit& unit, std::vector<torch::Tensor> grads) {
  torch::NoGradGuard no_grad;
  const auto weights = norm_weights_.find(&unit);
  for (std::size_t i = 0; i < grads.size(); ++i) {
    torch::Tensor& grad = grads[i];
    if (!grad.defined()) continue;
    grad = grad.to(torch::kFloat32);
    // Norms in fp64: the clip factor of an example must not depend on how
    // its squares were grouped into units and parameters.
    torch::Tensor squares = grad.flatten(1).to(torch::kFloat64).square().sum(1);
    if (weights != norm_weights_.end() && i < weights->second.size() && weights->second[i] != 1)
      squares = squares * weights->second[i];
    squared_norms_ = squared_norms_.defined() ? squared_norms_ + squares : squares;
  }
  pending_.push_back({&unit, std::move(grads)});
}

torch::Tensor PerExampleGradients::clip() {
  torch::NoGradGuard no_grad;
  if (!squared_norms_.defined()) {
    pending_.clear();
    return torch::empty({0}, torch::kFloat64);
  }
  if (norm_group_ && norm_group_->size() > 1) {
    squared_norms_ = squared_norms_.contiguous();
    norm_group_->all_reduce_for_compute(squared_norms_.data_ptr(),
                                        static_cast<std::size_t>(squared_norms_.numel()),
                                        DType::kFloat64);
  }
  const torch::Tensor norms = squared_norms_.sqrt();
  // min(1, C / ||g||), and 1 for a zero gradient (a padding row).
  const torch::Tensor factors =
      (max_grad_norm_ / norms).clamp_max(1.0).nan_to_num(1.0, 1.0).to(torch::kFloat32);
  for (Pending& p : pending_) {
    std::vector<torch::Tensor>& sums = clipped_sums_[p.unit];
    if (sums.empty()) sums.resize(p.grads.size());
    for (std::size_t i = 0; i < p.grads.size(); ++i) {
      if (!p.grads[i].defined()) continue;
      const torch::Tensor clipped = torch::tensordot(factors, p.grads[i], {0}, {0});
      sums[i] = sums[i].defined() ? sums[i] + clipped : clipped;
      p.grads[i] = torch::Tensor();
    }
  }
  pending_.clear();
  squared_norms_ = torch::Tensor();
  return norms.cpu();
}

void PerExampleGradients::reduce(const std::vector<ShardedUnit*>& units) {
  NSS_ASSERT(pending_.empty(), "fsdp", "per-example gradients reduced before they were clipped");
  for (ShardedUnit* unit : units) {
    if (unit->layout().numel(true) == 0) continue;
    auto found = clipped_sums_.find(unit);
    std::vector<torch::Tensor> sums;  // none: zeros
    if (found != clipped_sums_.end()) sums = std::move(found->second);
    unit->gradient_leaf().mutable_grad() = unit->reduce_gradient(std::move(sums));
  }
  clipped_sums_.clear();
}

}  // namespace nss::fsdp

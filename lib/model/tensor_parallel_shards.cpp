#include "model/tensor_parallel_shards.h"

#include <torch/torch.h>

#include "core/error.h"
#include "model/tensor_parallel_params.h"

namespace nss::model {

torch::Tensor tensor_parallel_part(const torch::Tensor& whole,
                                   const arch::TensorPlacement& placement,
                                   const arch::TensorParallelPlan& plan, int rank) {
  NSS_ASSERT(rank >= 0 && rank < plan.size, "model",
             "tensor rank " + std::to_string(rank) + " of " + std::to_string(plan.size));
  const std::int64_t part_rows = placement.shard_shape.front();
  switch (placement.split) {
    case arch::TensorSplit::kWhole:
      return whole.clone();
    case arch::TensorSplit::kColumns: {
      const std::int64_t columns = placement.shard_shape[1];
      return whole.narrow(1, rank * columns, columns).clone();
    }
    case arch::TensorSplit::kHeadGroups:
      return whole.narrow(0, first_whole_row(plan, placement, rank), part_rows).clone();
    case arch::TensorSplit::kRows:
      break;
  }
  // Rows past the whole tensor's pad the vocabulary to a multiple of T.
  const std::int64_t first = first_whole_row(plan, placement, rank);
  const std::int64_t present = std::clamp<std::int64_t>(whole.size(0) - first, 0, part_rows);
  std::vector<std::int64_t> shape = whole.sizes().vec();
  shape[0] = part_rows;
  torch::Tensor part = torch::zeros(shape, whole.options());
  if (present > 0) part.narrow(0, 0, present).copy_(whole.narrow(0, first, present));
  return part;
}

}  // namespace nss::model

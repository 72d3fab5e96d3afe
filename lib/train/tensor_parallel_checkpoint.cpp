#include "train/tensor_parallel_checkpoint.h"

#include <algorithm>

#include "core/error.h"
#include "model/tensor_parallel_params.h"

namespace nss::train {
namespace {

// "optimizer.exp_avg.<param>" -> "<param>"; a master is named as its parameter.
std::string parameter_of(const std::string& state_tensor) {
  for (const char* prefix : {"optimizer.exp_avg_sq.", "optimizer.exp_avg."}) {
    const std::string p = prefix;
    if (state_tensor.rfind(p, 0) == 0) return state_tensor.substr(p.size());
  }
  return state_tensor;
}

}  // namespace

TensorParallelCheckpoint::TensorParallelCheckpoint(const std::vector<model::ParamSpec>& specs,
                                                   const arch::TensorParallelPlan& plan, int rank)
    : plan_(plan), rank_(rank) {
  for (const auto& spec : specs)
    params_[spec.name] = {model::parameter_placement(plan, spec), spec.shape};
}

const TensorParallelCheckpoint::Placed& TensorParallelCheckpoint::placed(
    const std::string& state_tensor) const {
  const auto it = params_.find(parameter_of(state_tensor));
  NSS_ASSERT(it != params_.end(), "train", "no tensor-parallel placement for " + state_tensor);
  return it->second;
}

checkpoint::TensorSpec TensorParallelCheckpoint::tensor(const layout::StateTensorSpec& part) const {
  const Placed& p = placed(part.name);
  const bool by_columns = p.placement.split == arch::TensorSplit::kColumns;
  return {part.name, p.whole_shape, DType::kFloat32, by_columns ? plan_.size : 1};
}

std::vector<checkpoint::Piece> TensorParallelCheckpoint::row_part(const Placed& p,
                                                                  checkpoint::Piece piece) const {
  const std::int64_t columns = p.whole_shape.size() > 1 ? p.whole_shape[1] : 1;
  const auto first = model::first_whole_row(plan_, p.placement, rank_) * columns;
  const std::uint64_t begin = static_cast<std::uint64_t>(first) + piece.tensor_offset;
  const std::uint64_t end =
      std::min(begin + piece.length, checkpoint::element_count(p.whole_shape));
  if (begin >= end) return {};
  piece.tensor_offset = begin;
  piece.length = end - begin;
  return {piece};
}

std::vector<checkpoint::Piece> TensorParallelCheckpoint::saved(
    const checkpoint::Piece& part) const {
  const Placed& p = placed(part.tensor);
  // One of the ranks that hold the same values writes them.
  if (rank_ % model::tensor_copies(plan_, p.placement) != 0) return {};
  if (p.placement.split != arch::TensorSplit::kColumns) return row_part(p, part);
  checkpoint::Piece piece = part;
  piece.tensor_offset +=
      static_cast<std::uint64_t>(rank_) * checkpoint::element_count(p.placement.shard_shape);
  return {piece};
}

std::vector<checkpoint::Piece> TensorParallelCheckpoint::loaded(
    const checkpoint::Piece& part) const {
  const Placed& p = placed(part.tensor);
  if (p.placement.split != arch::TensorSplit::kColumns) return row_part(p, part);
  checkpoint::Piece piece = part;
  piece.view_blocks = plan_.size;
  piece.view_block = rank_;
  return {piece};
}

}  // namespace nss::train

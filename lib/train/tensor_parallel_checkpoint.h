// How a tensor rank's training state meets a checkpoint: a step holds every
// parameter (and its AdamW moments) whole, in the Hugging Face shape, so that
// it resumes at any (replica, shard, tensor) layout and consolidates as
// ever. A rank's buffers hold its part of each (arch/tensor_parallel.h):
// saved, a part split by rows is its rows of the tensor (the vocabulary's
// padding rows are not saved), a part split by columns is one of T column
// blocks the step stores the tensor in (checkpoint::TensorSpec::column_blocks),
// and a tensor several tensor ranks hold is written by the first of them;
// loaded, each rank reads its part as a view of whatever the step stores.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "arch/tensor_parallel.h"
#include "checkpoint/layout.h"
#include "layout/sharded_state_layout.h"
#include "model/param_spec.h"

namespace nss::train {

class TensorParallelCheckpoint {
 public:
  /// The parameters `specs` (whole shapes) placed by `plan`, for tensor rank `rank`.
  TensorParallelCheckpoint(const std::vector<model::ParamSpec>& specs,
                           const arch::TensorParallelPlan& plan, int rank);

  /// The logical tensor of state tensor `part` (named as layout::state_tensor_name).
  checkpoint::TensorSpec tensor(const layout::StateTensorSpec& part) const;

  /// A piece of this rank's part as it saves it (none when another tensor
  /// rank writes these values; shortened where it holds vocabulary padding),
  /// and as it loads it.
  std::vector<checkpoint::Piece> saved(const checkpoint::Piece& part) const;
  std::vector<checkpoint::Piece> loaded(const checkpoint::Piece& part) const;

 private:
  struct Placed {
    arch::TensorPlacement placement;
    std::vector<std::int64_t> whole_shape;  // the vocabulary unpadded
  };
  const Placed& placed(const std::string& state_tensor) const;
  // `piece` moved by the part's first element and cut at the whole tensor's end.
  std::vector<checkpoint::Piece> row_part(const Placed& p, checkpoint::Piece piece) const;

  arch::TensorParallelPlan plan_;
  int rank_;
  std::map<std::string, Placed> params_;  // by parameter name
};

}  // namespace nss::train

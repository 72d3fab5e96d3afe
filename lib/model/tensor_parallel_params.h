// Where each parameter of the model (param_spec.h) sits on the tensor ranks:
// the placement arch/tensor_parallel.h plans for its tensor, a LoRA factor
// following its layer. Plain C++: the unit layouts, the preflight and the
// checkpoints read the same placements.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "arch/tensor_parallel.h"
#include "model/param_spec.h"

namespace nss::model {

/// The placement of `spec`, a parameter of unit_parameters() of the model
/// `plan` was made for; InternalError for a name the model does not have.
arch::TensorPlacement parameter_placement(const arch::TensorParallelPlan& plan,
                                          const ParamSpec& spec);

/// How many tensor ranks hold the same values of `placement`'s tensor: T
/// for a whole one, the key/value replicas for a head group, else 1.
int tensor_copies(const arch::TensorParallelPlan& plan, const arch::TensorPlacement& placement);

/// The whole tensor's row where tensor rank `rank`'s part begins: its first
/// row for a split by rows or key/value head groups, 0 for a whole tensor or
/// a split by columns.
std::int64_t first_whole_row(const arch::TensorParallelPlan& plan,
                             const arch::TensorPlacement& placement, int rank);

/// The elements [offset, offset + count) of tensor rank `rank`'s part of a
/// tensor placed by `placement` whose whole shape is `whole_shape` (the
/// vocabulary unpadded), as runs of the whole tensor's row-major elements:
/// `run(whole_offset, length, part_offset)` once per run, in order. Part
/// elements past the whole tensor (the vocabulary's padding) are in no run.
void for_each_whole_run(const arch::TensorParallelPlan& plan,
                        const arch::TensorPlacement& placement,
                        const std::vector<std::int64_t>& whole_shape, int rank, std::int64_t offset,
                        std::int64_t count,
                        const std::function<void(std::int64_t whole_offset, std::int64_t length,
                                                 std::int64_t part_offset)>& run);

}  // namespace nss::model

// The part of a whole tensor one tensor rank holds, as arch/tensor_parallel.h
// places it: for loading a whole model onto tensor ranks and for comparing
// a tensor-parallel run with a whole one.
#pragma once

#include <torch/types.h>

#include "arch/tensor_parallel.h"

namespace nss::model {

/// Tensor rank `rank`'s part of `whole` (Hugging Face layout; the
/// vocabulary's rows unpadded: the padding rows come back as zeros), a copy.
torch::Tensor tensor_parallel_part(const torch::Tensor& whole,
                                   const arch::TensorPlacement& placement,
                                   const arch::TensorParallelPlan& plan, int rank);

}  // namespace nss::model

// The collectives of tensor parallelism as autograd operations (Megatron's
// mappings): what enters a column-parallel layer is copied to every tensor
// rank and its gradient summed over them; what leaves a row-parallel layer
// is summed over them; with sequence parallelism the residual stream
// between those regions is split along the sequence (all-gathered on the
// way in, reduce-scattered on the way out). A parameter every tensor rank
// holds whole but whose gradient each rank sees only a part of (a norm
// under sequence parallelism, a LoRA factor that is not split, a key/value
// head several ranks compute with) has its gradient summed over the ranks
// that share it. Every collective runs on the group's communicator, so it
// is counted with the rest.
#pragma once

#include <torch/types.h>

#include "arch/tensor_parallel.h"
#include "comm/communicator.h"

namespace nss::model {

/// This rank's tensor-parallel group as the forward sees it.
struct TensorParallel {
  comm::Communicator* group = nullptr;  // the T ranks of this rank's tensor group
  /// The ranks that compute with this rank's key/value head when T exceeds
  /// the key/value heads (plan->kv_replicas > 1), else nullptr.
  comm::Communicator* kv_group = nullptr;
  const arch::TensorParallelPlan* plan = nullptr;
  /// The residual stream, norms and embedding output split along the sequence.
  bool sequence_parallel = false;

  int rank() const { return group->rank(); }
  int size() const { return group->size(); }
};

/// Into a parallel region: `x` itself; backward sums its gradient over `group`.
torch::Tensor enter_parallel_region(const torch::Tensor& x, comm::Communicator& group);

/// Out of a parallel region: `x` summed over `group`; backward passes the gradient on.
torch::Tensor reduce_parallel_region(const torch::Tensor& x, comm::Communicator& group);

/// [B, S / T, ...] -> [B, S, ...]: the group's pieces of the sequence in rank
/// order; backward reduce-scatters the gradient (each rank's piece summed).
torch::Tensor gather_sequence(const torch::Tensor& x, comm::Communicator& group);

/// [B, S, ...] -> [B, S / T, ...]: summed over `group`, this rank's piece of
/// the sequence kept; backward all-gathers the gradient. S must divide by T.
torch::Tensor reduce_scatter_sequence(const torch::Tensor& x, comm::Communicator& group);

/// `parameter` itself; backward sums its gradient over `group`.
torch::Tensor sum_gradient_over(const torch::Tensor& parameter, comm::Communicator& group);

}  // namespace nss::model

// Global gradient norm over every rank's shards (one all-reduce of a single
// number) and clipping to a maximum norm, as torch.nn.utils.clip_grad_norm_.
#pragma once

#include <vector>

#include "comm/communicator.h"

namespace at {
class Tensor;
}

namespace nss::optim {

/// L2 norm of all gradients of `params` over all ranks (padding gradients are zero).
double global_grad_norm(comm::Communicator& comm, const std::vector<at::Tensor*>& params);

/// Scales gradients by min(1, max_norm / (norm + 1e-6)) when max_norm > 0;
/// returns the factor applied.
double clip_grads(const std::vector<at::Tensor*>& params, double norm, double max_norm);

}  // namespace nss::optim

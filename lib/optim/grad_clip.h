// Global gradient norm over every rank's shards (one all-reduce of a single
// number) and clipping to a maximum norm, as torch.nn.utils.clip_grad_norm_.
#pragma once

#include <cstdint>
#include <vector>

#include "comm/communicator.h"

namespace at {
class Tensor;
}

namespace nss::optim {

/// Elements [begin, end) of a gradient that `copies` ranks of `comm` hold
/// (tensor parallelism's whole tensors): each of their squares counts
/// 1 / copies on every one of them, so the sum counts it once.
struct SharedElements {
  std::int64_t begin = 0, end = 0;
  int copies = 1;
};

/// L2 norm of all gradients of `params` over all ranks (padding gradients
/// are zero); `shared` (per param, or nullptr) lists the elements held by
/// several ranks.
double global_grad_norm(comm::Communicator& comm, const std::vector<at::Tensor*>& params,
                        const std::vector<std::vector<SharedElements>>* shared = nullptr);

/// Scales gradients by min(1, max_norm / (norm + 1e-6)) when max_norm > 0;
/// returns the factor applied.
double clip_grads(const std::vector<at::Tensor*>& params, double norm, double max_norm);

}  // namespace nss::optim

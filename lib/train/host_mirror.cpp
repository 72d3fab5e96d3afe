#include "train/host_mirror.h"

#include <torch/cuda.h>
#include <torch/torch.h>

#include "core/error.h"

namespace nss::train {

HostMirror::HostMirror(std::vector<torch::Tensor> tensors) : tensors_(std::move(tensors)) {
  hosts_.reserve(tensors_.size());
  for (const torch::Tensor& t : tensors_) {
    NSS_ASSERT(t.is_contiguous(), "train", "mirrored tensors must be contiguous");
    if (t.device().is_cpu()) {
      hosts_.push_back(t);
      continue;
    }
    NSS_ASSERT(t.device().is_cuda(), "train", "only CPU and CUDA tensors can be mirrored");
    has_device_tensors_ = true;
    hosts_.push_back(torch::empty(t.sizes(), t.options().device(torch::kCPU).pinned_memory(true)));
  }
}

void HostMirror::to_host() {
  if (!has_device_tensors_) return;
  for (std::size_t i = 0; i < tensors_.size(); ++i)
    if (tensors_[i].is_cuda()) hosts_[i].copy_(tensors_[i], /*non_blocking=*/true);
  // Device -> pinned host copies are asynchronous; the writer must not read
  // before they land.
  torch::cuda::synchronize();
}

void HostMirror::to_device() {
  if (!has_device_tensors_) return;
  for (std::size_t i = 0; i < tensors_.size(); ++i)
    if (tensors_[i].is_cuda()) tensors_[i].copy_(hosts_[i], /*non_blocking=*/true);
  // The host mirrors may be overwritten by the next load or snapshot.
  torch::cuda::synchronize();
}

std::int64_t HostMirror::pinned_bytes() const {
  std::int64_t bytes = 0;
  for (std::size_t i = 0; i < tensors_.size(); ++i)
    if (tensors_[i].is_cuda()) bytes += static_cast<std::int64_t>(hosts_[i].nbytes());
  return bytes;
}

}  // namespace nss::train

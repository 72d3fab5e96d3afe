// Host copies of device tensors for the checkpoint library, which works on
// host buffers (pointer, count, dtype). A CPU tensor is its own mirror (no
// copy, no extra memory); a CUDA tensor gets a pinned host tensor of the same
// size, allocated once, so device -> host copies run at full PCIe/NVLink-C2C
// speed and can be issued without blocking, then fenced once.
#pragma once

#include <vector>

#include <torch/types.h>

namespace nss::train {

class HostMirror {
 public:
  /// Mirrors `tensors` (contiguous; the tensors must outlive the mirror).
  explicit HostMirror(std::vector<torch::Tensor> tensors);

  /// The host tensor for tensors[i]: the tensor itself on CPU, else its pinned copy.
  const torch::Tensor& host(std::size_t i) const { return hosts_[i]; }
  std::size_t size() const { return hosts_.size(); }

  /// True when some tensor lives on a device (copies are needed).
  bool has_device_tensors() const { return has_device_tensors_; }

  /// Copies every device tensor into its host mirror (non-blocking copies,
  /// then one wait): afterwards the host mirrors are a snapshot.
  void to_host();

  /// Copies every host mirror back into its device tensor (after a load).
  void to_device();

  /// Bytes of pinned host memory held.
  std::int64_t pinned_bytes() const;

 private:
  std::vector<torch::Tensor> tensors_;
  std::vector<torch::Tensor> hosts_;
  bool has_device_tensors_ = false;
};

}  // namespace nss::train

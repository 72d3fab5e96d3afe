// The trainable buffer with the optimizer offloaded (ShardOptions::
// offload_optimizer, fsdp/shard_storage.h): the fp32 master in host memory
// (pinned on CUDA, optim::OffloadedAdamW::host_tensor), where the offloaded
// optimizer step updates it; a device shard in the compute dtype that the
// step writes as well and the gathers read; and, as the autograd leaf, a
// zero-stride fp32 "gradient anchor" on the device that receives the
// gradient shard without holding shard-sized memory of its own.
#pragma once

#include <vector>

#include "fsdp/shard_storage.h"

namespace nss::fsdp {

class OffloadedMaster final : public TrainableStorage {
 public:
  OffloadedMaster(const layout::FlatLayout& layout, int rank, torch::Dtype compute_dtype,
                  torch::Device device);

  void fill(const layout::FlatLayout& layout, const ParamFiller& filler) override;
  std::vector<torch::Tensor> all_gather_inputs() const override { return {compute_}; }
  torch::Tensor post_all_gather(const std::vector<torch::Tensor>& gathered) const override {
    return gathered.at(0);
  }
  std::int64_t version() const override { return compute_._version(); }
  /// The compute shard (the master and the anchor hold none on the device).
  std::int64_t bytes() const override { return static_cast<std::int64_t>(compute_.nbytes()); }

  torch::Tensor& master() override { return master_; }
  torch::Tensor& gradient_leaf() override { return anchor_; }
  torch::Tensor& compute_shard() override { return compute_; }
  /// The compute shard := master, cast as OffloadedAdamW's step writes it.
  void master_written() override;

 private:
  std::vector<layout::ShardPiece> pieces_;
  torch::Tensor master_;   // fp32, host
  torch::Tensor compute_;  // compute dtype, device
  torch::Tensor anchor_;   // fp32, device, stride 0
};

}  // namespace nss::fsdp

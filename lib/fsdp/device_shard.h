// Plain shards on the compute device (fsdp/shard_storage.h): the frozen base
// in the compute dtype, gathered as it is, and the fp32 master of the
// trainable parameters, the autograd leaf itself, cast to the compute dtype
// for its gathers.
#pragma once

#include <vector>

#include "fsdp/shard_storage.h"

namespace nss::fsdp {

/// This rank's shard of the frozen buffer, in `dtype` (the compute dtype) on `device`.
class DeviceShard final : public ShardStorage {
 public:
  DeviceShard(const layout::FlatLayout& layout, int rank, torch::Dtype dtype, torch::Device device);

  torch::Tensor& shard() { return shard_; }

  void fill(const layout::FlatLayout& layout, const ParamFiller& filler) override;
  std::vector<torch::Tensor> all_gather_inputs() const override { return {shard_}; }
  torch::Tensor post_all_gather(const std::vector<torch::Tensor>& gathered) const override {
    return gathered.at(0);
  }
  std::int64_t version() const override { return shard_._version(); }
  std::int64_t bytes() const override { return static_cast<std::int64_t>(shard_.nbytes()); }

 private:
  std::vector<layout::ShardPiece> pieces_;
  torch::Tensor shard_;
};

/// This rank's fp32 master of the trainable buffer on `device`: the autograd
/// leaf (requires grad once filled, unless empty), gathered in `compute_dtype`.
class DeviceMaster final : public TrainableStorage {
 public:
  DeviceMaster(const layout::FlatLayout& layout, int rank, torch::Dtype compute_dtype,
               torch::Device device);

  void fill(const layout::FlatLayout& layout, const ParamFiller& filler) override;
  std::vector<torch::Tensor> all_gather_inputs() const override;
  torch::Tensor post_all_gather(const std::vector<torch::Tensor>& gathered) const override {
    return gathered.at(0);
  }
  std::int64_t version() const override { return master_._version(); }
  std::int64_t bytes() const override { return static_cast<std::int64_t>(master_.nbytes()); }

  torch::Tensor& master() override { return master_; }
  torch::Tensor& gradient_leaf() override { return master_; }
  torch::Tensor& compute_shard() override { return no_compute_shard_; }
  /// Nothing derives from the master: the gathers read it.
  void master_written() override {}

 private:
  std::vector<layout::ShardPiece> pieces_;
  torch::Dtype compute_dtype_;
  torch::Tensor master_;
  torch::Tensor no_compute_shard_;  // undefined
};

}  // namespace nss::fsdp

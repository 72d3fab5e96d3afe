#include "fsdp/device_shard.h"

#include <torch/torch.h>

namespace nss::fsdp {

DeviceShard::DeviceShard(const layout::FlatLayout& layout, int rank, torch::Dtype dtype,
                         torch::Device device)
    : pieces_(layout.shard_pieces(false, rank)),
      shard_(torch::zeros({layout.shard_size(false)},
                          torch::TensorOptions().dtype(dtype).device(device))) {}

void DeviceShard::fill(const layout::FlatLayout& layout, const ParamFiller& filler) {
  torch::NoGradGuard no_grad;
  shard_ = fill_on_host(layout, pieces_, shard_.numel(), filler).to(shard_.options());
}

DeviceMaster::DeviceMaster(const layout::FlatLayout& layout, int rank, torch::Dtype compute_dtype,
                           torch::Device device)
    : pieces_(layout.shard_pieces(true, rank)),
      compute_dtype_(compute_dtype),
      master_(torch::zeros({layout.shard_size(true)},
                           torch::TensorOptions().dtype(torch::kFloat32).device(device))) {}

void DeviceMaster::fill(const layout::FlatLayout& layout, const ParamFiller& filler) {
  torch::NoGradGuard no_grad;
  master_ = fill_on_host(layout, pieces_, master_.numel(), filler).to(master_.options());
  master_.requires_grad_(master_.numel() > 0);
}

std::vector<torch::Tensor> DeviceMaster::all_gather_inputs() const {
  return {master_.detach().to(compute_dtype_).contiguous()};
}

}  // namespace nss::fsdp

#include "fsdp/offloaded_master.h"

#include <torch/torch.h>

#include "optim/offloaded_adamw.h"

namespace nss::fsdp {
namespace {

// fp32 [shard] on the device over one element (stride 0), so it holds no
// shard-sized memory. AccumulateGrad adopts the contiguous gradient shard
// from ShardedUnit::reduce_gradient as its .grad() (or clones it contiguous)
// and adds later micro-batches into it.
torch::Tensor gradient_anchor(std::int64_t shard, const torch::Device& device) {
  const auto fp32 = torch::TensorOptions().dtype(torch::kFloat32).device(device);
  if (shard == 0) return torch::zeros({0}, fp32);
  return torch::zeros({1}, fp32).expand({shard}).detach().requires_grad_(true);
}

}  // namespace

OffloadedMaster::OffloadedMaster(const layout::FlatLayout& layout, int rank,
                                 torch::Dtype compute_dtype, torch::Device device)
    : pieces_(layout.shard_pieces(true, rank)),
      master_(optim::OffloadedAdamW::host_tensor(layout.shard_size(true)).zero_()),
      compute_(torch::zeros({layout.shard_size(true)},
                            torch::TensorOptions().dtype(compute_dtype).device(device))),
      anchor_(gradient_anchor(layout.shard_size(true), device)) {}

void OffloadedMaster::fill(const layout::FlatLayout& layout, const ParamFiller& filler) {
  torch::NoGradGuard no_grad;
  master_.copy_(fill_on_host(layout, pieces_, master_.numel(), filler));  // keeps the pinned memory
  master_written();
}

void OffloadedMaster::master_written() {
  torch::NoGradGuard no_grad;
  compute_.copy_(master_);
}

}  // namespace nss::fsdp

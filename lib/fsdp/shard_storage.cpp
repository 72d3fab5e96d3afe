#include "fsdp/shard_storage.h"

#include <torch/torch.h>

#include "core/error.h"

namespace nss::fsdp {

DType collective_dtype(torch::Dtype dtype) {
  switch (dtype) {
    case torch::kFloat32:
      return DType::kFloat32;
    case torch::kFloat64:
      return DType::kFloat64;
    case torch::kBFloat16:
      return DType::kBFloat16;
    case torch::kFloat16:
      return DType::kFloat16;
    case torch::kUInt8:
      return DType::kUInt8;
    default:
      break;
  }
  throw InternalError("fsdp", std::string("no collective moves ") + c10::toString(dtype));
}

InFlightGather ShardStorage::start_gather(comm::Communicator& comm) const {
  InFlightGather g;
  g.shard_version = version();
  for (torch::Tensor& input : all_gather_inputs()) {
    if (input.numel() == 0) continue;
    const DType dtype = collective_dtype(input.scalar_type());
    g.send.push_back(std::move(input));
    const torch::Tensor& send = g.send.back();
    g.full.push_back(torch::empty({send.numel() * comm.size()}, send.options()));
    g.tickets.push_back(comm.start_all_gather(send.data_ptr(), g.full.back().data_ptr(),
                                              static_cast<std::size_t>(send.numel()), dtype));
  }
  return g;
}

torch::Tensor fill_on_host(const layout::FlatLayout& layout,
                           const std::vector<layout::ShardPiece>& pieces, std::int64_t shard_size,
                           const ParamFiller& filler) {
  torch::Tensor host = torch::zeros({shard_size}, torch::kFloat32);
  float* data = host.data_ptr<float>();
  for (const auto& piece : pieces)
    filler(layout.params()[piece.param], piece.tensor_offset, piece.length,
           data + piece.shard_offset);
  return host;
}

}  // namespace nss::fsdp

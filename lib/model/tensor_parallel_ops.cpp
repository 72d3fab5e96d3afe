#include "model/tensor_parallel_ops.h"

#include <cstdint>

#include <torch/torch.h>

#include "core/error.h"
#include "fsdp/shard_storage.h"

namespace nss::model {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The communicator travels through the autograd context as an integer.
comm::Communicator& group_of(AutogradContext* ctx) {
  return *reinterpret_cast<comm::Communicator*>(
      static_cast<std::intptr_t>(ctx->saved_data.at("group").toInt()));
}

torch::Tensor summed(const torch::Tensor& x, comm::Communicator& group) {
  torch::Tensor y = x.contiguous().clone();
  // Only compute issued afterwards reads the sum: on NCCL the host need not wait.
  group.all_reduce_for_compute(y.data_ptr(), static_cast<std::size_t>(y.numel()),
                               fsdp::collective_dtype(y.scalar_type()));
  return y;
}

// [B, S / T, R...] pieces of every rank -> [B, S, R...].
torch::Tensor gathered(const torch::Tensor& x, comm::Communicator& group) {
  const torch::Tensor piece = x.contiguous();
  const std::int64_t t = group.size();
  torch::Tensor full = torch::empty({t * piece.numel()}, piece.options());
  group.all_gather(piece.data_ptr(), full.data_ptr(), static_cast<std::size_t>(piece.numel()),
                   fsdp::collective_dtype(piece.scalar_type()));
  std::vector<std::int64_t> shape = piece.sizes().vec();
  std::vector<std::int64_t> ranked{t};
  ranked.insert(ranked.end(), shape.begin(), shape.end());
  shape[1] *= t;
  return full.view(ranked).transpose(0, 1).reshape(shape);
}

// [B, S, R...] -> this rank's [B, S / T, R...] of the sum over the group.
torch::Tensor scattered(const torch::Tensor& x, comm::Communicator& group) {
  const std::int64_t t = group.size();
  NSS_ASSERT(x.dim() >= 2 && x.size(1) % t == 0, "model",
             "a sequence of " + std::to_string(x.dim() >= 2 ? x.size(1) : 0) +
                 " cannot be split over " + std::to_string(t) + " tensor ranks");
  std::vector<std::int64_t> pieces = x.sizes().vec();
  pieces[1] /= t;
  std::vector<std::int64_t> ranked{pieces[0], t};
  ranked.insert(ranked.end(), pieces.begin() + 1, pieces.end());
  const torch::Tensor full = x.reshape(ranked).transpose(0, 1).contiguous();
  torch::Tensor piece = torch::empty(pieces, x.options());
  group.reduce_scatter(full.data_ptr(), piece.data_ptr(), static_cast<std::size_t>(piece.numel()),
                       fsdp::collective_dtype(x.scalar_type()));
  return piece;
}

// The tensor itself (a view: autograd needs a new output).
torch::Tensor passed_on(const torch::Tensor& x, comm::Communicator&) {
  return x.view_as(x);
}

// One of Megatron's mappings: `Forward` in the forward, `Backward` on the
// gradient, both over the group whose address the autograd context keeps.
using Collective = torch::Tensor (*)(const torch::Tensor&, comm::Communicator&);
template <Collective Forward, Collective Backward>
struct Mapping : public torch::autograd::Function<Mapping<Forward, Backward>> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, std::int64_t group) {
    ctx->saved_data["group"] = group;
    return Forward(x, group_of(ctx));
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    return {Backward(grads[0], group_of(ctx)), torch::Tensor()};
  }
};

template <Collective Forward, Collective Backward>
torch::Tensor mapped(const torch::Tensor& x, comm::Communicator& group) {
  if (group.size() == 1) return x;
  return Mapping<Forward, Backward>::apply(
      x, static_cast<std::int64_t>(reinterpret_cast<std::intptr_t>(&group)));
}

}  // namespace

torch::Tensor enter_parallel_region(const torch::Tensor& x, comm::Communicator& group) {
  return mapped<passed_on, summed>(x, group);
}

torch::Tensor reduce_parallel_region(const torch::Tensor& x, comm::Communicator& group) {
  return mapped<summed, passed_on>(x, group);
}

torch::Tensor gather_sequence(const torch::Tensor& x, comm::Communicator& group) {
  return mapped<gathered, scattered>(x, group);
}

torch::Tensor reduce_scatter_sequence(const torch::Tensor& x, comm::Communicator& group) {
  return mapped<scattered, gathered>(x, group);
}

torch::Tensor sum_gradient_over(const torch::Tensor& parameter, comm::Communicator& group) {
  return mapped<passed_on, summed>(parameter, group);
}

}  // namespace nss::model

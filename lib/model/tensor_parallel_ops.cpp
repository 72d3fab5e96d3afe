#include "model/tensor_parallel_ops.h"

#include <cstdint>

#include <torch/torch.h>

#include "core/error.h"

namespace nss::model {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

DType collective_dtype(torch::ScalarType type) {
  switch (type) {
    case torch::kFloat32:
      return DType::kFloat32;
    case torch::kFloat64:
      return DType::kFloat64;
    case torch::kBFloat16:
      return DType::kBFloat16;
    case torch::kFloat16:
      return DType::kFloat16;
    default:
      break;
  }
  throw InternalError("model",
                      std::string("no tensor-parallel collective for ") + c10::toString(type));
}

// The communicator travels through the autograd context as an integer.
comm::Communicator& group_of(AutogradContext* ctx) {
  return *reinterpret_cast<comm::Communicator*>(
      static_cast<std::intptr_t>(ctx->saved_data.at("group").toInt()));
}

torch::Tensor summed(const torch::Tensor& x, comm::Communicator& group) {
  torch::Tensor y = x.contiguous().clone();
  group.all_reduce(y.data_ptr(), static_cast<std::size_t>(y.numel()),
                   collective_dtype(y.scalar_type()), comm::ReduceOp::kSum);
  return y;
}

// [B, S / T, R...] pieces of every rank -> [B, S, R...].
torch::Tensor gathered(const torch::Tensor& x, comm::Communicator& group) {
  const torch::Tensor piece = x.contiguous();
  const std::int64_t t = group.size();
  torch::Tensor full = torch::empty({t * piece.numel()}, piece.options());
  group.all_gather(piece.data_ptr(), full.data_ptr(), static_cast<std::size_t>(piece.numel()),
                   collective_dtype(piece.scalar_type()));
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
                       collective_dtype(x.scalar_type()));
  return piece;
}

struct SumGradient : public torch::autograd::Function<SumGradient> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, std::int64_t group) {
    ctx->saved_data["group"] = group;
    return x.view_as(x);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    return {summed(grads[0], group_of(ctx)), torch::Tensor()};
  }
};

struct SumForward : public torch::autograd::Function<SumForward> {
  static torch::Tensor forward(AutogradContext*, const torch::Tensor& x, std::int64_t group) {
    return summed(x, *reinterpret_cast<comm::Communicator*>(static_cast<std::intptr_t>(group)));
  }
  static variable_list backward(AutogradContext*, variable_list grads) {
    return {grads[0], torch::Tensor()};
  }
};

struct GatherSequence : public torch::autograd::Function<GatherSequence> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, std::int64_t group) {
    ctx->saved_data["group"] = group;
    return gathered(x, group_of(ctx));
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    return {scattered(grads[0], group_of(ctx)), torch::Tensor()};
  }
};

struct ReduceScatterSequence : public torch::autograd::Function<ReduceScatterSequence> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, std::int64_t group) {
    ctx->saved_data["group"] = group;
    return scattered(x, group_of(ctx));
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    return {gathered(grads[0], group_of(ctx)), torch::Tensor()};
  }
};

std::int64_t handle(comm::Communicator& group) {
  return static_cast<std::int64_t>(reinterpret_cast<std::intptr_t>(&group));
}

}  // namespace

torch::Tensor enter_parallel_region(const torch::Tensor& x, comm::Communicator& group) {
  return sum_gradient_over(x, group);
}

torch::Tensor reduce_parallel_region(const torch::Tensor& x, comm::Communicator& group) {
  if (group.size() == 1) return x;
  return SumForward::apply(x, handle(group));
}

torch::Tensor gather_sequence(const torch::Tensor& x, comm::Communicator& group) {
  if (group.size() == 1) return x;
  return GatherSequence::apply(x, handle(group));
}

torch::Tensor reduce_scatter_sequence(const torch::Tensor& x, comm::Communicator& group) {
  if (group.size() == 1) return x;
  return ReduceScatterSequence::apply(x, handle(group));
}

torch::Tensor sum_gradient_over(const torch::Tensor& parameter, comm::Communicator& group) {
  if (group.size() == 1) return parameter;
  return SumGradient::apply(parameter, handle(group));
}

}  // namespace nss::model

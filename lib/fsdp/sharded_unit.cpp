#include "fsdp/sharded_unit.h"

#include <torch/torch.h>

#include "core/error.h"

namespace nss::fsdp {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

DType comm_dtype(torch::Dtype dtype) {
  switch (dtype) {
    case torch::kFloat32:
      return DType::kFloat32;
    case torch::kBFloat16:
      return DType::kBFloat16;
    case torch::kFloat16:
      return DType::kFloat16;
    default:
      break;
  }
  throw InternalError("fsdp", std::string("unsupported compute dtype ") + c10::toString(dtype));
}

// The gathered parameters of a unit (and of its tied unit), and the flat
// buffers autograd differentiates against.
struct Gathered {
  torch::Tensor trainable, frozen, tied_trainable, tied_frozen;
};

Gathered gather_all(ShardedUnit& unit, ShardedUnit* tied, const char* phase) {
  Gathered g;
  g.trainable = unit.gather(true, phase);
  g.frozen = unit.gather(false, phase);
  if (tied) {
    g.tied_trainable = tied->gather(true, phase);
    g.tied_frozen = tied->gather(false, phase);
  }
  return g;
}

std::vector<torch::Tensor> param_views(const ShardedUnit& unit, const ShardedUnit* tied,
                                       const Gathered& g) {
  std::vector<torch::Tensor> params = unit.views(g.trainable, g.frozen);
  if (tied) {
    auto more = tied->views(g.tied_trainable, g.tied_frozen);
    params.insert(params.end(), more.begin(), more.end());
  }
  return params;
}

// Turns the gathered trainable buffers into leaves, so autograd returns the
// whole flat gradient (padding included, as zeros) in one tensor.
void make_leaves(Gathered& g, bool unit_grad, bool tied_grad) {
  if (unit_grad) g.trainable = g.trainable.detach().requires_grad_(true);
  if (tied_grad) g.tied_trainable = g.tied_trainable.detach().requires_grad_(true);
}

torch::Tensor detached_input(const torch::Tensor& input, bool needs_grad) {
  torch::Tensor x = input.detach();
  if (needs_grad) x.requires_grad_(true);
  return x;
}

struct UnitFunction : public torch::autograd::Function<UnitFunction> {
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor input, torch::Tensor master,
                               torch::Tensor tied_master, std::int64_t unit_address,
                               std::int64_t tied_address, std::int64_t compute_address) {
    auto& unit = *reinterpret_cast<ShardedUnit*>(unit_address);
    auto* tied = reinterpret_cast<ShardedUnit*>(tied_address);
    const auto& compute = *reinterpret_cast<const UnitCompute*>(compute_address);
    ctx->saved_data["unit"] = unit_address;
    ctx->saved_data["tied"] = tied_address;
    ctx->saved_data["compute"] = compute_address;

    Gathered g = gather_all(unit, tied, "forward");
    if (unit.options().activation_checkpointing) {
      ctx->save_for_backward({input});
      torch::NoGradGuard no_grad;
      return compute(input, param_views(unit, tied, g));
    }
    // No recompute: build the unit's graph now and keep it (with the
    // gathered parameters it references) until this unit's backward.
    torch::AutoGradMode grad_mode(true);
    make_leaves(g, master.requires_grad() && master.numel() > 0,
                tied && tied_master.requires_grad() && tied_master.numel() > 0);
    torch::Tensor x = detached_input(input, input.requires_grad());
    torch::Tensor out = compute(x, param_views(unit, tied, g));
    ctx->saved_data["out"] = out;
    ctx->saved_data["x"] = x;
    ctx->saved_data["leaf"] = g.trainable;
    ctx->saved_data["tied_leaf"] = g.tied_trainable;
    return out.detach();
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    auto& unit = *reinterpret_cast<ShardedUnit*>(ctx->saved_data["unit"].toInt());
    auto* tied = reinterpret_cast<ShardedUnit*>(ctx->saved_data["tied"].toInt());
    const auto& compute = *reinterpret_cast<const UnitCompute*>(ctx->saved_data["compute"].toInt());
    const bool need_input = ctx->needs_input_grad(0);
    const bool need_unit = ctx->needs_input_grad(1);
    const bool need_tied = tied != nullptr && ctx->needs_input_grad(2);

    torch::Tensor out, x, leaf, tied_leaf;
    if (unit.options().activation_checkpointing) {
      Gathered g = gather_all(unit, tied, "backward");
      make_leaves(g, need_unit, need_tied);
      x = detached_input(ctx->get_saved_variables()[0], need_input);
      torch::AutoGradMode grad_mode(true);
      out = compute(x, param_views(unit, tied, g));
      leaf = g.trainable;
      tied_leaf = g.tied_trainable;
    } else {
      out = ctx->saved_data["out"].toTensor();
      x = ctx->saved_data["x"].toTensor();
      leaf = ctx->saved_data["leaf"].toTensor();
      tied_leaf = ctx->saved_data["tied_leaf"].toTensor();
      ctx->saved_data.erase("out");  // release the graph as soon as possible
    }

    std::vector<torch::Tensor> wrt;
    if (need_input) wrt.push_back(x);
    if (need_unit) wrt.push_back(leaf);
    if (need_tied) wrt.push_back(tied_leaf);
    variable_list grads =
        torch::autograd::grad({out}, wrt, {grad_outputs[0]}, /*retain_graph=*/false,
                              /*create_graph=*/false, /*allow_unused=*/true);
    out = torch::Tensor();
    std::size_t next = 0;
    torch::Tensor grad_input = need_input ? grads[next++] : torch::Tensor();
    torch::Tensor grad_unit = need_unit ? unit.reduce_gradient(grads[next++]) : torch::Tensor();
    torch::Tensor grad_tied = need_tied ? tied->reduce_gradient(grads[next++]) : torch::Tensor();
    return {grad_input, grad_unit, grad_tied, torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

ShardedUnit::ShardedUnit(std::string label, FlatLayout layout, comm::Communicator& comm,
                         ShardOptions options)
    : label_(std::move(label)), layout_(std::move(layout)), comm_(comm), options_(options) {
  if (layout_.world_size() != comm.size())
    throw InternalError("fsdp", "layout for " + std::to_string(layout_.world_size()) +
                                    " ranks used with a communicator of " +
                                    std::to_string(comm.size()));
  comm_dtype(options_.compute_dtype);  // reject unsupported dtypes early
  const auto fp32 = torch::TensorOptions().dtype(torch::kFloat32).device(options_.device);
  master_ = torch::zeros({layout_.shard_size(true)}, fp32);
  frozen_ = torch::zeros({layout_.shard_size(false)}, fp32.dtype(options_.compute_dtype));
}

void ShardedUnit::materialize(const ParamFiller& filler) {
  torch::NoGradGuard no_grad;
  const int rank = comm_.rank();
  for (const bool trainable : {true, false}) {
    // Fill on the host in fp32, then move to the shard's device and dtype.
    torch::Tensor host = torch::zeros({layout_.shard_size(trainable)}, torch::kFloat32);
    float* data = host.data_ptr<float>();
    for (const auto& piece : layout_.shard_pieces(trainable, rank))
      filler(layout_.params()[piece.param], piece.tensor_offset, piece.length,
             data + piece.shard_offset);
    torch::Tensor& shard = trainable ? master_ : frozen_;
    shard = host.to(shard.options());
  }
  master_.requires_grad_(master_.numel() > 0);
}

torch::Tensor ShardedUnit::apply(const torch::Tensor& input, const UnitCompute& compute,
                                 ShardedUnit* tied) {
  const torch::Tensor tied_master = tied ? tied->master() : torch::Tensor(torch::empty({0}));
  return UnitFunction::apply(input, master_, tied_master, reinterpret_cast<std::int64_t>(this),
                             reinterpret_cast<std::int64_t>(tied),
                             reinterpret_cast<std::int64_t>(&compute));
}

torch::Tensor ShardedUnit::gather(bool trainable, const char* phase) {
  const std::int64_t shard = layout_.shard_size(trainable);
  const auto options = torch::TensorOptions().dtype(options_.compute_dtype).device(options_.device);
  if (shard == 0) return torch::empty({0}, options);
  const torch::Tensor source = (trainable ? master_ : frozen_).detach();
  const torch::Tensor send = source.to(options_.compute_dtype).contiguous();
  torch::Tensor full = torch::empty({shard * comm_.size()}, options);
  comm::CollectiveLabel label(comm_, label_ + " " + phase);
  comm_.all_gather(send.data_ptr(), full.data_ptr(), static_cast<std::size_t>(shard),
                   comm_dtype(options_.compute_dtype));
  return full;
}

torch::Tensor ShardedUnit::reduce_gradient(const torch::Tensor& full_grad) {
  const std::int64_t shard = layout_.shard_size(true);
  const auto fp32 = torch::TensorOptions().dtype(torch::kFloat32).device(options_.device);
  // An unused parameter has no gradient, but every rank must still take part.
  const torch::Tensor full = full_grad.defined() ? full_grad.to(torch::kFloat32).contiguous()
                                                 : torch::zeros({shard * comm_.size()}, fp32);
  // Fresh storage: autograd's accumulation may steal this tensor as .grad.
  torch::Tensor grad = torch::empty({shard}, fp32);
  comm::CollectiveLabel label(comm_, label_ + " backward");
  comm_.reduce_scatter(full.data_ptr(), grad.data_ptr(), static_cast<std::size_t>(shard),
                       DType::kFloat32);
  return grad;
}

std::vector<torch::Tensor> ShardedUnit::views(const torch::Tensor& trainable_full,
                                              const torch::Tensor& frozen_full) const {
  std::vector<torch::Tensor> views;
  views.reserve(layout_.params().size());
  for (std::size_t i = 0; i < layout_.params().size(); ++i) {
    const FlatSlot& slot = layout_.slot(i);
    const FlatParam& param = layout_.params()[i];
    const torch::Tensor& buffer = slot.trainable ? trainable_full : frozen_full;
    views.push_back(buffer.narrow(0, slot.offset, param.numel()).view(param.shape));
  }
  return views;
}

}  // namespace nss::fsdp

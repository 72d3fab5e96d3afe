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

// One unit's (and its tied unit's) parameters for one forward or recompute:
// views into freshly gathered flat buffers. Trainable views become separate
// autograd leaves when their gradient is needed, so autograd returns one
// gradient per parameter instead of materialising a full-buffer zero tensor
// per view (what the backward of narrow() on a flat leaf would do).
struct UnitParams {
  std::vector<torch::Tensor> unit, tied;

  std::vector<torch::Tensor> all() const {
    std::vector<torch::Tensor> params = unit;
    params.insert(params.end(), tied.begin(), tied.end());
    return params;
  }
};

// A trainable view as the leaf autograd differentiates against. Per example
// (DP-SGD) it is expanded to [rows, shape...] without copying, so each row's
// computation reads its own slice and autograd returns one gradient per row.
torch::Tensor trainable_leaf(const torch::Tensor& view, std::int64_t per_example_rows) {
  torch::Tensor leaf = view.detach();
  if (per_example_rows > 0) {
    std::vector<std::int64_t> shape = {per_example_rows};
    shape.insert(shape.end(), view.sizes().begin(), view.sizes().end());
    leaf = leaf.unsqueeze(0).expand(shape);
  }
  return leaf.requires_grad_(true);
}

std::vector<torch::Tensor> gathered_views(ShardedUnit& unit, bool as_leaves,
                                          std::int64_t per_example_rows, const char* phase) {
  std::vector<torch::Tensor> views = unit.views(unit.gather(FlatBuffer::kTrainable, phase),
                                                unit.gather(FlatBuffer::kFrozen, phase),
                                                unit.gather(FlatBuffer::kQuantized, phase));
  if (as_leaves) {
    for (std::size_t i = 0; i < views.size(); ++i)
      if (unit.layout().slot(i).trainable) views[i] = trainable_leaf(views[i], per_example_rows);
  }
  return views;
}

// The rows of `input` when `unit`'s gradient is wanted per example, else 0.
std::int64_t per_example_rows(const ShardedUnit& unit, bool unit_leaves,
                              const torch::Tensor& input) {
  return unit_leaves && unit.per_example() != nullptr ? input.size(0) : 0;
}

UnitParams gather_params(ShardedUnit& unit, ShardedUnit* tied, bool unit_leaves, bool tied_leaves,
                         const torch::Tensor& input, const char* phase) {
  // A tied unit's share of the gradient is reduced whole: per-example
  // clipping covers LoRA adapters, never a tied embedding.
  NSS_ASSERT(!(tied_leaves && unit.per_example() != nullptr), "fsdp",
             "per-example gradients of a tied unit are not supported");
  UnitParams p;
  p.unit = gathered_views(unit, unit_leaves, per_example_rows(unit, unit_leaves, input), phase);
  if (tied) p.tied = gathered_views(*tied, tied_leaves, 0, phase);
  return p;
}

// The trainable leaves of one unit, the tensors autograd differentiates against.
std::vector<torch::Tensor> trainable_leaves(const ShardedUnit& unit,
                                            const std::vector<torch::Tensor>& views) {
  std::vector<torch::Tensor> leaves;
  for (std::size_t i = 0; i < views.size(); ++i)
    if (unit.layout().slot(i).trainable) leaves.push_back(views[i]);
  return leaves;
}

// Starts `target`'s gathers while this unit computes (ShardOptions::prefetch).
void prefetch_for(ShardedUnit* target, const char* phase) {
  if (target != nullptr && target->options().prefetch) target->prefetch(phase);
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

    if (unit.options().activation_checkpointing) {
      ctx->save_for_backward({input});
      torch::NoGradGuard no_grad;
      const UnitParams p = gather_params(unit, tied, false, false, input, "forward");
      prefetch_for(unit.forward_next(), "forward");
      return compute(input, p.all());
    }
    // No recompute: build the unit's graph now and keep it (with the
    // gathered parameters it references) until this unit's backward.
    torch::AutoGradMode grad_mode(true);
    const UnitParams p = gather_params(
        unit, tied, master.requires_grad() && master.numel() > 0,
        tied && tied_master.requires_grad() && tied_master.numel() > 0, input, "forward");
    prefetch_for(unit.forward_next(), "forward");
    torch::Tensor x = detached_input(input, input.requires_grad());
    torch::Tensor out = compute(x, p.all());
    ctx->saved_data["out"] = out;
    ctx->saved_data["x"] = x;
    ctx->saved_data["unit_params"] = p.unit;
    ctx->saved_data["tied_params"] = p.tied;
    return out.detach();
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    auto& unit = *reinterpret_cast<ShardedUnit*>(ctx->saved_data["unit"].toInt());
    auto* tied = reinterpret_cast<ShardedUnit*>(ctx->saved_data["tied"].toInt());
    const auto& compute = *reinterpret_cast<const UnitCompute*>(ctx->saved_data["compute"].toInt());
    const bool need_input = ctx->needs_input_grad(0);
    const bool need_unit = ctx->needs_input_grad(1);
    const bool need_tied = tied != nullptr && ctx->needs_input_grad(2);

    torch::Tensor out, x;
    UnitParams p;
    if (unit.options().activation_checkpointing) {
      const torch::Tensor input = ctx->get_saved_variables()[0];
      p = gather_params(unit, tied, need_unit, need_tied, input, "backward");
      prefetch_for(unit.backward_next(), "backward");
      x = detached_input(input, need_input);
      torch::AutoGradMode grad_mode(true);
      out = compute(x, p.all());
    } else {
      out = ctx->saved_data["out"].toTensor();
      x = ctx->saved_data["x"].toTensor();
      p.unit = ctx->saved_data["unit_params"].toTensorVector();
      p.tied = ctx->saved_data["tied_params"].toTensorVector();
      ctx->saved_data.clear();  // release the graph as soon as possible
    }

    std::vector<torch::Tensor> wrt;
    if (need_input) wrt.push_back(x);
    std::vector<torch::Tensor> unit_leaves =
        need_unit ? trainable_leaves(unit, p.unit) : std::vector<torch::Tensor>();
    std::vector<torch::Tensor> tied_leaves =
        need_tied ? trainable_leaves(*tied, p.tied) : std::vector<torch::Tensor>();
    wrt.insert(wrt.end(), unit_leaves.begin(), unit_leaves.end());
    wrt.insert(wrt.end(), tied_leaves.begin(), tied_leaves.end());
    variable_list grads =
        torch::autograd::grad({out}, wrt, {grad_outputs[0]}, /*retain_graph=*/false,
                              /*create_graph=*/false, /*allow_unused=*/true);
    // The gathered parameters are no longer needed: free them (every view and
    // leaf of them) before the flat gradient buffers are allocated.
    const auto unit_count = static_cast<std::ptrdiff_t>(unit_leaves.size());
    out = torch::Tensor();
    x = torch::Tensor();
    p = UnitParams();
    wrt.clear();
    unit_leaves.clear();
    tied_leaves.clear();

    torch::Tensor grad_input = need_input ? std::move(grads[0]) : torch::Tensor();
    auto next = grads.begin() + (need_input ? 1 : 0);
    torch::Tensor grad_unit, grad_tied;
    // Moved out of `grads`, so reduce_gradient frees each parameter gradient
    // as soon as it is copied.
    if (need_unit) {
      std::vector<torch::Tensor> mine(std::make_move_iterator(next),
                                      std::make_move_iterator(next + unit_count));
      next += unit_count;
      if (unit.per_example() != nullptr)
        unit.per_example()->add(unit, std::move(mine));  // reduced after clipping
      else
        grad_unit = unit.reduce_gradient(std::move(mine));
    }
    if (need_tied) {
      std::vector<torch::Tensor> theirs(std::make_move_iterator(next),
                                        std::make_move_iterator(grads.end()));
      grad_tied = tied->reduce_gradient(std::move(theirs));
    }
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
  if (layout_.quantized_numel() > 0)
    quantized_.emplace(layout_, comm_.rank(), options_.double_quant, options_.device);
}

void ShardedUnit::materialize(const ParamFiller& filler) {
  fill(filler);
  finish_quantization();
}

void ShardedUnit::finish_quantization() {
  if (quantized_) quantized_->quantize_scales(comm_, label_);
}

void ShardedUnit::fill(const ParamFiller& filler) {
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
  if (quantized_) {
    std::vector<float> host(static_cast<std::size_t>(layout_.quantized_shard_size()), 0.0f);
    for (const auto& piece : layout_.quantized_pieces(rank))
      filler(layout_.params()[piece.param], piece.tensor_offset, piece.length,
             host.data() + piece.shard_offset);
    quantized_->quantize(host.data());
  }
}

torch::Tensor ShardedUnit::apply(const torch::Tensor& input, const UnitCompute& compute,
                                 ShardedUnit* tied) {
  const torch::Tensor tied_master = tied ? tied->master() : torch::Tensor(torch::empty({0}));
  return UnitFunction::apply(input, master_, tied_master, reinterpret_cast<std::int64_t>(this),
                             reinterpret_cast<std::int64_t>(tied),
                             reinterpret_cast<std::int64_t>(&compute));
}

void ShardedUnit::set_prefetch_targets(ShardedUnit* forward_next, ShardedUnit* backward_next) {
  forward_next_ = forward_next;
  backward_next_ = backward_next;
}

bool ShardedUnit::holds(FlatBuffer buffer) const {
  switch (buffer) {
    case FlatBuffer::kTrainable:
      return layout_.shard_size(true) > 0;
    case FlatBuffer::kFrozen:
      return layout_.shard_size(false) > 0;
    case FlatBuffer::kQuantized:
      return quantized_.has_value();
  }
  return false;
}

std::int64_t ShardedUnit::shard_version(FlatBuffer buffer) const {
  switch (buffer) {
    case FlatBuffer::kTrainable:
      return master_._version();
    case FlatBuffer::kFrozen:
      return frozen_._version();
    case FlatBuffer::kQuantized:
      return 0;  // quantised once, never changed
  }
  return 0;
}

InFlightGather ShardedUnit::start_gather(FlatBuffer buffer, const char* phase) {
  comm::CollectiveLabel label(comm_, label_ + " " + phase);
  if (buffer == FlatBuffer::kQuantized) return quantized_->start_gather(comm_);
  const bool trainable = buffer == FlatBuffer::kTrainable;
  const std::int64_t shard = layout_.shard_size(trainable);
  const auto options = torch::TensorOptions().dtype(options_.compute_dtype).device(options_.device);
  const torch::Tensor& source = trainable ? master_ : frozen_;
  InFlightGather g;
  g.shard_version = source._version();
  g.send.push_back(source.detach().to(options_.compute_dtype).contiguous());
  g.full.push_back(torch::empty({shard * comm_.size()}, options));
  g.tickets.push_back(comm_.start_all_gather(g.send.back().data_ptr(), g.full.back().data_ptr(),
                                             static_cast<std::size_t>(shard),
                                             comm_dtype(options_.compute_dtype)));
  return g;
}

void ShardedUnit::wait(const InFlightGather& gather) {
  for (const auto ticket : gather.tickets) comm_.wait(ticket);
}

void ShardedUnit::prefetch(const char* phase) {
  torch::NoGradGuard no_grad;
  for (const FlatBuffer buffer : kFlatBuffers) {
    auto& slot = prefetched_[static_cast<int>(buffer)];
    if (!slot && holds(buffer)) slot = start_gather(buffer, phase);
  }
}

void ShardedUnit::drop_prefetched() {
  for (auto& slot : prefetched_) {
    if (!slot) continue;
    wait(*slot);  // its buffers may be reused only after the gather
    slot.reset();
  }
}

torch::Tensor ShardedUnit::gather(FlatBuffer buffer, const char* phase) {
  const auto options = torch::TensorOptions().dtype(options_.compute_dtype).device(options_.device);
  if (!holds(buffer)) return torch::empty({0}, options);
  torch::NoGradGuard no_grad;
  auto& slot = prefetched_[static_cast<int>(buffer)];
  std::optional<InFlightGather> started;
  started.swap(slot);
  if (started && started->shard_version != shard_version(buffer)) {  // changed since: start again
    wait(*started);
    started.reset();
  }
  if (!started) started = start_gather(buffer, phase);
  wait(*started);
  if (buffer == FlatBuffer::kQuantized)
    return quantized_->dequantize(*started, options_.compute_dtype);
  return started->full[0];
}

torch::Tensor ShardedUnit::reduce_gradient(std::vector<torch::Tensor> param_grads) {
  const std::int64_t shard = layout_.shard_size(true);
  const auto fp32 = torch::TensorOptions().dtype(torch::kFloat32).device(options_.device);
  // The flat fp32 gradient: parameters at their slots, padding zero. An unused
  // parameter has no gradient (zeros), but every rank still takes part.
  torch::Tensor full = torch::zeros({shard * comm_.size()}, fp32);
  std::size_t next = 0;
  for (std::size_t i = 0; i < layout_.params().size(); ++i) {
    if (!layout_.slot(i).trainable) continue;
    if (next == param_grads.size()) break;  // the rest are zeros
    torch::Tensor& grad = param_grads[next++];
    if (grad.defined())
      full.narrow(0, layout_.slot(i).offset, layout_.params()[i].numel()).copy_(grad.reshape(-1));
    grad = torch::Tensor();  // free each parameter gradient as soon as it is copied
  }
  // Fresh storage: autograd's accumulation may steal this tensor as .grad.
  torch::Tensor shard_grad = torch::empty({shard}, fp32);
  comm::CollectiveLabel label(comm_, label_ + " backward");
  comm_.reduce_scatter(full.data_ptr(), shard_grad.data_ptr(), static_cast<std::size_t>(shard),
                       DType::kFloat32);
  return shard_grad;
}

std::vector<torch::Tensor> ShardedUnit::views(const torch::Tensor& trainable_full,
                                              const torch::Tensor& frozen_full,
                                              const torch::Tensor& quantized_full) const {
  std::vector<torch::Tensor> views;
  views.reserve(layout_.params().size());
  for (std::size_t i = 0; i < layout_.params().size(); ++i) {
    const FlatSlot& slot = layout_.slot(i);
    const FlatParam& param = layout_.params()[i];
    const torch::Tensor& buffer = slot.quantized   ? quantized_full
                                  : slot.trainable ? trainable_full
                                                   : frozen_full;
    views.push_back(buffer.narrow(0, slot.offset, param.numel()).view(param.shape));
  }
  return views;
}

}  // namespace nss::fsdp

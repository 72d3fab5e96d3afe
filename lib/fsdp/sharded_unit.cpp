#include "fsdp/sharded_unit.h"

#include <torch/torch.h>

#include "core/error.h"
#include "fsdp/unit_function.h"
#include "optim/offloaded_adamw.h"

namespace nss::fsdp {
namespace {

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

// The offloaded unit's autograd leaf: fp32 [shard] on the device over one
// element (stride 0), so it holds no shard-sized memory. AccumulateGrad
// adopts the contiguous gradient shard from reduce_gradient as its .grad()
// (or clones it contiguous) and adds later micro-batches into it.
torch::Tensor gradient_anchor(std::int64_t shard, const torch::Device& device) {
  const auto fp32 = torch::TensorOptions().dtype(torch::kFloat32).device(device);
  if (shard == 0) return torch::zeros({0}, fp32);
  return torch::zeros({1}, fp32).expand({shard}).detach().requires_grad_(true);
}

}  // namespace

ShardedUnit::ShardedUnit(std::string label, layout::FlatLayout layout, ShardComms comms,
                         ShardOptions options)
    : label_(std::move(label)),
      layout_(std::move(layout)),
      comms_(comms),
      comm_(*comms.shard),
      options_(options) {
  if (layout_.world_size() != comm_.size())
    throw InternalError("fsdp", "layout for " + std::to_string(layout_.world_size()) +
                                    " ranks used with a communicator of " +
                                    std::to_string(comm_.size()));
  comm_dtype(options_.compute_dtype);  // reject unsupported dtypes early
  const auto fp32 = torch::TensorOptions().dtype(torch::kFloat32).device(options_.device);
  const std::int64_t shard = layout_.shard_size(true);
  if (options_.offload_optimizer) {
    master_ = optim::OffloadedAdamW::host_tensor(shard).zero_();
    compute_ = torch::zeros({shard}, fp32.dtype(options_.compute_dtype));
    anchor_ = gradient_anchor(shard, options_.device);
  } else {
    master_ = torch::zeros({shard}, fp32);
  }
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
    if (trainable && options_.offload_optimizer) {
      master_.copy_(host);  // keeps the pinned memory
      refresh_compute_shard();
      continue;
    }
    torch::Tensor& shard = trainable ? master_ : frozen_;
    shard = host.to(shard.options());
  }
  if (!options_.offload_optimizer) master_.requires_grad_(master_.numel() > 0);
  if (quantized_) {
    std::vector<float> host(static_cast<std::size_t>(layout_.quantized_shard_size()), 0.0f);
    for (const auto& piece : layout_.quantized_pieces(rank))
      filler(layout_.params()[piece.param], piece.tensor_offset, piece.length,
             host.data() + piece.shard_offset);
    quantized_->quantize(host.data());
  }
}

void ShardedUnit::refresh_compute_shard() {
  if (!options_.offload_optimizer) return;
  torch::NoGradGuard no_grad;
  compute_.copy_(master_);  // cast as OffloadedAdamW's step writes it
}

torch::Tensor ShardedUnit::apply(const torch::Tensor& input, const UnitCompute& compute,
                                 ShardedUnit* tied) {
  return run_unit(*this, input, compute, tied);
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
      return trainable_source()._version();
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
  const torch::Tensor& source = trainable ? trainable_source() : frozen_;
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
  {
    comm::CollectiveLabel label(comm_, label_ + " backward");
    comm_.reduce_scatter(full.data_ptr(), shard_grad.data_ptr(), static_cast<std::size_t>(shard),
                         DType::kFloat32);
  }
  full = torch::Tensor();
  if (comms_.replicated()) {
    comm::CollectiveLabel label(*comms_.replicate, label_ + " backward");
    comms_.replicate->all_reduce_for_compute(shard_grad.data_ptr(), static_cast<std::size_t>(shard),
                                             DType::kFloat32);
  }
  return shard_grad;
}

std::vector<torch::Tensor> ShardedUnit::views(const torch::Tensor& trainable_full,
                                              const torch::Tensor& frozen_full,
                                              const torch::Tensor& quantized_full) const {
  std::vector<torch::Tensor> views;
  views.reserve(layout_.params().size());
  for (std::size_t i = 0; i < layout_.params().size(); ++i) {
    const layout::FlatSlot& slot = layout_.slot(i);
    const layout::FlatParam& param = layout_.params()[i];
    const torch::Tensor& buffer = slot.quantized   ? quantized_full
                                  : slot.trainable ? trainable_full
                                                   : frozen_full;
    views.push_back(buffer.narrow(0, slot.offset, param.numel()).view(param.shape));
  }
  return views;
}

}  // namespace nss::fsdp

#include "fsdp/sharded_unit.h"

#include <torch/torch.h>

#include "core/error.h"
#include "fsdp/offloaded_master.h"
#include "fsdp/unit_function.h"

namespace nss::fsdp {
namespace {

void check_compute_dtype(torch::Dtype dtype) {
  if (dtype == torch::kFloat32 || dtype == torch::kBFloat16 || dtype == torch::kFloat16) return;
  throw InternalError("fsdp", std::string("unsupported compute dtype ") + c10::toString(dtype));
}

// The one place the trainable buffer's storage is chosen.
std::unique_ptr<TrainableStorage> trainable_storage(const layout::FlatLayout& layout, int rank,
                                                    const ShardOptions& options) {
  if (options.offload_optimizer)
    return std::make_unique<OffloadedMaster>(layout, rank, options.compute_dtype, options.device);
  return std::make_unique<DeviceMaster>(layout, rank, options.compute_dtype, options.device);
}

std::size_t index(FlatBuffer buffer) {
  return static_cast<std::size_t>(buffer);
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
  check_compute_dtype(options_.compute_dtype);
  const int rank = comm_.rank();
  trainable_ = trainable_storage(layout_, rank, options_);
  frozen_ = std::make_unique<DeviceShard>(layout_, rank, options_.compute_dtype, options_.device);
  if (layout_.quantized_numel() > 0)
    quantized_ = std::make_unique<QuantizedShard>(layout_, rank, options_.double_quant,
                                                  options_.device, options_.compute_dtype);
  if (layout_.shard_size(true) > 0) gathered_[index(FlatBuffer::kTrainable)] = trainable_.get();
  if (layout_.shard_size(false) > 0) gathered_[index(FlatBuffer::kFrozen)] = frozen_.get();
  gathered_[index(FlatBuffer::kQuantized)] = quantized_.get();
}

std::vector<ShardStorage*> ShardedUnit::storages() const {
  std::vector<ShardStorage*> all = {trainable_.get(), frozen_.get()};
  if (quantized_) all.push_back(quantized_.get());
  return all;
}

void ShardedUnit::materialize(const ParamFiller& filler) {
  fill(filler);
  complete_fill();
}

void ShardedUnit::fill(const ParamFiller& filler) {
  for (ShardStorage* storage : storages()) storage->fill(layout_, filler);
}

void ShardedUnit::complete_fill() {
  for (ShardStorage* storage : storages()) storage->complete_fill(comm_, label_);
}

torch::Tensor ShardedUnit::apply(const torch::Tensor& input, const UnitCompute& compute,
                                 ShardedUnit* tied) {
  return run_unit(*this, input, compute, tied);
}

void ShardedUnit::set_prefetch_targets(ShardedUnit* forward_next, ShardedUnit* backward_next) {
  forward_next_ = forward_next;
  backward_next_ = backward_next;
}

InFlightGather ShardedUnit::start_gather(FlatBuffer buffer, const char* phase) {
  comm::CollectiveLabel label(comm_, label_ + " " + phase);
  return gathered_[index(buffer)]->start_gather(comm_);
}

void ShardedUnit::wait(const InFlightGather& gather) {
  for (const auto ticket : gather.tickets) comm_.wait(ticket);
}

void ShardedUnit::prefetch(const char* phase) {
  torch::NoGradGuard no_grad;
  for (const FlatBuffer buffer : kFlatBuffers) {
    auto& slot = prefetched_[index(buffer)];
    if (!slot && gathered_[index(buffer)] != nullptr) slot = start_gather(buffer, phase);
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
  const ShardStorage* storage = gathered_[index(buffer)];
  if (storage == nullptr)
    return torch::empty(
        {0}, torch::TensorOptions().dtype(options_.compute_dtype).device(options_.device));
  torch::NoGradGuard no_grad;
  std::optional<InFlightGather> started;
  started.swap(prefetched_[index(buffer)]);
  if (started && started->shard_version != storage->version()) {  // changed since: start again
    wait(*started);
    started.reset();
  }
  if (!started) started = start_gather(buffer, phase);
  wait(*started);
  return storage->unshard(*started);
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

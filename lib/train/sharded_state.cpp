#include "train/sharded_state.h"

#include <algorithm>

#include <torch/torch.h>

#include "core/error.h"
#include "train/host_mirror.h"

namespace nss::train {
namespace {

std::vector<layout::FlatLayout> unit_layouts(ShardedLlama& model) {
  std::vector<layout::FlatLayout> layouts;
  for (const auto& unit : model.units()) layouts.push_back(unit->layout());
  return layouts;
}

int rank_of(ShardedLlama& model) {
  return model.units().front()->comm().rank();
}

// A moment beside its master: on the device, or in host memory (pinned on
// CUDA) when the master is offloaded.
torch::Tensor zeros_like_master(const torch::Tensor& master, bool offloaded) {
  if (offloaded) return optim::OffloadedAdamW::host_tensor(master.numel()).zero_();
  return torch::zeros_like(master, master.options().requires_grad(false));
}

bool same_options(const optim::AdamWOptions& a, const optim::AdamWOptions& b) {
  return a.beta1 == b.beta1 && a.beta2 == b.beta2 && a.eps == b.eps &&
         a.weight_decay == b.weight_decay;
}

}  // namespace

ShardedState::ShardedState(ShardedLlama& model)
    : model_(model),
      offloaded_(model.units().front()->options().offload_optimizer),
      layout_(unit_layouts(model), rank_of(model)) {
  auto& units = model.units();
  for (auto& unit : units) {
    NSS_ASSERT(unit->options().offload_optimizer == offloaded_, "train",
               "every unit offloads its optimizer state or none does");
    exp_avg_.push_back(zeros_like_master(unit->master(), offloaded_));
    exp_avg_sq_.push_back(zeros_like_master(unit->master(), offloaded_));
  }
  for (std::size_t u = 0; u < units.size(); ++u)
    adamw_shards_.push_back({&units[u]->master(), &exp_avg_[u], &exp_avg_sq_[u],
                             units[u]->layout().decay_ranges(layout_.rank())});
  if (const model::TensorParallel* tp = model.tensor_parallel())
    tensor_parallel_.emplace(model::all_parameters(model.model(), model.lora()), *tp->plan,
                             tp->rank());
  for (const auto& spec : layout_.tensors())
    tensors_.push_back(tensor_parallel_ ? tensor_parallel_->tensor(spec)
                                        : checkpoint::TensorSpec{spec.name, spec.shape});
}

ShardedState::~ShardedState() = default;

torch::Tensor& ShardedState::tensor(std::size_t unit, layout::StateTensor kind) {
  switch (kind) {
    case layout::StateTensor::kMaster:
      return model_.units().at(unit)->master();
    case layout::StateTensor::kExpAvg:
      return exp_avg_.at(unit);
    case layout::StateTensor::kExpAvgSq:
      return exp_avg_sq_.at(unit);
  }
  throw InternalError("train", "unknown state tensor kind");
}

std::vector<torch::Tensor> ShardedState::tensors(layout::StateTensor kind) {
  std::vector<torch::Tensor> out;
  for (std::size_t u = 0; u < model_.units().size(); ++u) out.push_back(tensor(u, kind));
  return out;
}

std::vector<torch::Tensor*> ShardedState::masters() {
  std::vector<torch::Tensor*> out;
  for (auto& unit : model_.units()) out.push_back(&unit->master());
  return out;
}

std::vector<torch::Tensor*> ShardedState::gradient_leaves() {
  std::vector<torch::Tensor*> out;
  for (auto& unit : model_.units()) out.push_back(&unit->gradient_leaf());
  return out;
}

void ShardedState::drop_gradients() {
  for (auto* leaf : gradient_leaves()) leaf->mutable_grad() = torch::Tensor();
}

void ShardedState::update(const optim::AdamW& adamw, double lr) {
  const std::int64_t step = ++applied_updates;
  if (!offloaded_) {
    adamw.step(adamw_shards_, lr, step);
    return;
  }
  if (!offloaded_adamw_ || !same_options(offloaded_adamw_->options(), adamw.options()))
    offloaded_adamw_ =
        std::make_unique<optim::OffloadedAdamW>(adamw.options(), kOffloadStagingBytes);
  auto& units = model_.units();
  std::vector<optim::OffloadedShard> shards;
  for (std::size_t u = 0; u < units.size(); ++u) {
    const optim::AdamWShard& s = adamw_shards_[u];
    shards.push_back({s.param, s.exp_avg, s.exp_avg_sq, &units[u]->gradient_leaf().grad(),
                      &units[u]->compute_shard(), s.decay_ranges});
  }
  offloaded_adamw_->step(shards, lr, step);
}

const std::vector<checkpoint::ShardBuffer>& ShardedState::checkpoint_buffers() {
  if (mirror_) return buffers_;
  const std::vector<layout::StateBuffer> layout = layout_.buffers();
  std::vector<torch::Tensor> saved;
  for (const auto& buffer : layout) saved.push_back(tensor(buffer.unit, buffer.kind));
  mirror_ = std::make_unique<HostMirror>(saved);
  const fsdp::ShardComms& comms = model_.comms();
  const int replicas = comms.replicated() ? comms.replicate->size() : 1;
  const int replica = comms.replicated() ? comms.replicate->rank() : 0;
  buffers_ = host_buffers(layout, false);
  saved_ = host_buffers(layout_.buffers_written_by(replica, replicas), true);
  return buffers_;
}

const std::vector<checkpoint::ShardBuffer>& ShardedState::saved_buffers() {
  checkpoint_buffers();
  return saved_;
}

std::vector<checkpoint::ShardBuffer> ShardedState::host_buffers(
    const std::vector<layout::StateBuffer>& layout, bool saving) const {
  std::vector<checkpoint::ShardBuffer> buffers;
  for (std::size_t i = 0; i < layout.size(); ++i) {
    const layout::StateBuffer& b = layout[i];
    checkpoint::ShardBuffer buffer{b.dataset,
                                   DType::kFloat32,
                                   mirror_->host(i).data_ptr(),
                                   static_cast<std::uint64_t>(b.count),
                                   {}};
    for (const auto& piece : b.pieces) {
      const checkpoint::Piece part{piece.tensor, static_cast<std::uint64_t>(piece.tensor_offset),
                                   static_cast<std::uint64_t>(piece.length),
                                   static_cast<std::uint64_t>(piece.buffer_offset)};
      if (!tensor_parallel_) {
        buffer.pieces.push_back(part);
        continue;
      }
      for (const checkpoint::Piece& placed :
           saving ? tensor_parallel_->saved(part) : tensor_parallel_->loaded(part))
        buffer.pieces.push_back(placed);
    }
    buffers.push_back(std::move(buffer));
  }
  return buffers;
}

bool ShardedState::checkpoint_buffers_are_copies() const {
  NSS_ASSERT(mirror_, "train", "checkpoint_buffers() was never asked for");
  return mirror_->has_device_tensors();
}

void ShardedState::copy_to_host() {
  checkpoint_buffers();
  mirror_->to_host();
}

void ShardedState::copy_from_host() {
  checkpoint_buffers();
  mirror_->to_device();
  for (auto& unit : model_.units()) unit->master_written();
}

ShardedState::Bytes ShardedState::bytes() const {
  Bytes bytes;
  bytes.masters = layout_.bytes(layout::StateTensor::kMaster);
  bytes.gradients = bytes.masters;
  bytes.moments =
      layout_.bytes(layout::StateTensor::kExpAvg) + layout_.bytes(layout::StateTensor::kExpAvgSq);
  if (offloaded_) {
    bytes.offloaded_host = bytes.masters + bytes.moments;
    bytes.compute_shards =
        bytes.masters / 4 * torch::elementSize(model_.units().front()->options().compute_dtype);
    bytes.masters = 0;
    bytes.moments = 0;
  }
  for (std::size_t u = 0; u < model_.units().size(); ++u) {
    auto& unit = *model_.units()[u];
    const std::int64_t element = unit.frozen().element_size();
    bytes.frozen += layout_.frozen_bytes(u, element);
    if (unit.quantized()) bytes.quantized_base += unit.quantized()->bytes();
    bytes.largest_gathered_unit = std::max(
        bytes.largest_gathered_unit, (unit.layout().padded(true) + unit.layout().padded(false) +
                                      unit.layout().quantized_padded()) *
                                         element);
  }
  return bytes;
}

}  // namespace nss::train

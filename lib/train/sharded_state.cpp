#include "train/sharded_state.h"

#include <algorithm>

#include <torch/torch.h>

#include "core/error.h"
#include "train/host_mirror.h"

namespace nss::train {
namespace {

std::vector<fsdp::FlatLayout> unit_layouts(ShardedLlama& model) {
  std::vector<fsdp::FlatLayout> layouts;
  for (const auto& unit : model.units()) layouts.push_back(unit->layout());
  return layouts;
}

int rank_of(ShardedLlama& model) {
  return model.units().front()->comm().rank();
}

torch::Tensor zeros_like_master(const torch::Tensor& master) {
  return torch::zeros_like(master, master.options().requires_grad(false));
}

}  // namespace

ShardedState::ShardedState(ShardedLlama& model)
    : model_(model), layout_(unit_layouts(model), rank_of(model)) {
  auto& units = model.units();
  for (auto& unit : units) {
    exp_avg_.push_back(zeros_like_master(unit->master()));
    exp_avg_sq_.push_back(zeros_like_master(unit->master()));
  }
  for (std::size_t u = 0; u < units.size(); ++u)
    adamw_shards_.push_back({&units[u]->master(), &exp_avg_[u], &exp_avg_sq_[u],
                             units[u]->layout().decay_ranges(layout_.rank())});
  for (const auto& spec : layout_.tensors())
    tensors_.push_back({spec.name, spec.shape, DType::kFloat32});
}

ShardedState::~ShardedState() = default;

torch::Tensor& ShardedState::tensor(std::size_t unit, fsdp::StateTensor kind) {
  switch (kind) {
    case fsdp::StateTensor::kMaster:
      return model_.units().at(unit)->master();
    case fsdp::StateTensor::kExpAvg:
      return exp_avg_.at(unit);
    case fsdp::StateTensor::kExpAvgSq:
      return exp_avg_sq_.at(unit);
  }
  throw InternalError("train", "unknown state tensor kind");
}

std::vector<torch::Tensor> ShardedState::tensors(fsdp::StateTensor kind) {
  std::vector<torch::Tensor> out;
  for (std::size_t u = 0; u < model_.units().size(); ++u) out.push_back(tensor(u, kind));
  return out;
}

std::vector<torch::Tensor*> ShardedState::masters() {
  std::vector<torch::Tensor*> out;
  for (auto& unit : model_.units()) out.push_back(&unit->master());
  return out;
}

const std::vector<checkpoint::ShardBuffer>& ShardedState::checkpoint_buffers() {
  if (mirror_) return buffers_;
  const std::vector<fsdp::StateBuffer> layout = layout_.buffers();
  std::vector<torch::Tensor> saved;
  for (const auto& buffer : layout) saved.push_back(tensor(buffer.unit, buffer.kind));
  mirror_ = std::make_unique<HostMirror>(saved);
  for (std::size_t i = 0; i < layout.size(); ++i) {
    const fsdp::StateBuffer& b = layout[i];
    checkpoint::ShardBuffer buffer{b.dataset,
                                   DType::kFloat32,
                                   mirror_->host(i).data_ptr(),
                                   static_cast<std::uint64_t>(b.count),
                                   {}};
    for (const auto& piece : b.pieces)
      buffer.pieces.push_back({piece.tensor, static_cast<std::uint64_t>(piece.tensor_offset),
                               static_cast<std::uint64_t>(piece.length),
                               static_cast<std::uint64_t>(piece.buffer_offset)});
    buffers_.push_back(std::move(buffer));
  }
  return buffers_;
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
}

ShardedState::Bytes ShardedState::bytes() const {
  Bytes bytes;
  bytes.masters = layout_.bytes(fsdp::StateTensor::kMaster);
  bytes.gradients = bytes.masters;
  bytes.moments =
      layout_.bytes(fsdp::StateTensor::kExpAvg) + layout_.bytes(fsdp::StateTensor::kExpAvgSq);
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

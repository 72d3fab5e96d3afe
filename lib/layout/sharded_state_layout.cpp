#include "layout/sharded_state_layout.h"

#include <algorithm>
#include <cstdio>

#include "core/error.h"
#include "quant/nf4_storage.h"

namespace nss::layout {
namespace {

// What a checkpoint calls each kind: the prefix of its tensor names and the
// HDF5 group of its rank-file datasets (docs/checkpoints.md).
struct KindNames {
  const char* tensor_prefix;
  const char* dataset_group;
};

constexpr const char* kOptimizerPrefix = "optimizer.";

KindNames names_of(StateTensor kind) {
  switch (kind) {
    case StateTensor::kMaster:
      return {"", "/model"};
    case StateTensor::kExpAvg:
      return {"optimizer.exp_avg.", "/optimizer/exp_avg"};
    case StateTensor::kExpAvgSq:
      return {"optimizer.exp_avg_sq.", "/optimizer/exp_avg_sq"};
  }
  throw InternalError("fsdp", "unknown state tensor kind");
}

}  // namespace

std::string state_tensor_name(StateTensor kind, const std::string& param) {
  return names_of(kind).tensor_prefix + param;
}

bool is_optimizer_state(const std::string& tensor_name) {
  return tensor_name.rfind(kOptimizerPrefix, 0) == 0;
}

std::string state_dataset_name(StateTensor kind, std::size_t unit) {
  char name[64];
  std::snprintf(name, sizeof name, "%s/unit_%03zu", names_of(kind).dataset_group, unit);
  return name;
}

ShardedStateLayout::ShardedStateLayout(std::vector<FlatLayout> units, int rank)
    : units_(std::move(units)), rank_(rank) {
  for (const auto& unit : units_)
    NSS_ASSERT(rank >= 0 && rank < unit.world_size(), "fsdp",
               "rank " + std::to_string(rank) + " outside the units' world size");
}

std::vector<StateTensorSpec> ShardedStateLayout::tensors() const {
  std::vector<StateTensorSpec> specs;
  for (const StateTensor kind : kStateTensors)
    for (const auto& unit : units_)
      for (const auto& param : unit.params())
        if (param.trainable) specs.push_back({state_tensor_name(kind, param.name), param.shape});
  return specs;
}

std::vector<StateBuffer> ShardedStateLayout::buffers() const {
  std::vector<StateBuffer> buffers;
  for (std::size_t u = 0; u < units_.size(); ++u) {
    const FlatLayout& unit = units_[u];
    if (unit.numel(true) == 0) continue;
    const auto pieces = unit.shard_pieces(true, rank_);
    for (const StateTensor kind : kStateTensors) {
      StateBuffer buffer{u, kind, state_dataset_name(kind, u), unit.shard_size(true), {}};
      for (const auto& piece : pieces)
        buffer.pieces.push_back({state_tensor_name(kind, unit.params()[piece.param].name),
                                 piece.tensor_offset, piece.length, piece.shard_offset});
      buffers.push_back(std::move(buffer));
    }
  }
  return buffers;
}

std::vector<StateBuffer> ShardedStateLayout::buffers_written_by(int replica, int replicas) const {
  NSS_ASSERT(replicas >= 1 && replica >= 0 && replica < replicas, "fsdp", "replica out of range");
  std::vector<StateBuffer> buffers = this->buffers();
  for (StateBuffer& buffer : buffers) {
    const std::int64_t begin = buffer.count * replica / replicas;
    const std::int64_t end = buffer.count * (replica + 1) / replicas;
    std::vector<StateBuffer::Piece> mine;
    for (const auto& piece : buffer.pieces) {
      const std::int64_t from = std::max(begin, piece.buffer_offset);
      const std::int64_t to = std::min(end, piece.buffer_offset + piece.length);
      if (from >= to) continue;
      const std::int64_t skipped = from - piece.buffer_offset;
      mine.push_back({piece.tensor, piece.tensor_offset + skipped, to - from, from});
    }
    buffer.pieces = std::move(mine);
  }
  return buffers;
}

std::int64_t ShardedStateLayout::bytes(std::size_t unit, StateTensor) const {
  return units_.at(unit).shard_size(true) * kStateElementBytes;
}

std::int64_t ShardedStateLayout::bytes(StateTensor kind) const {
  std::int64_t total = 0;
  for (std::size_t u = 0; u < units_.size(); ++u) total += bytes(u, kind);
  return total;
}

std::int64_t ShardedStateLayout::saved_bytes() const {
  std::int64_t total = 0;
  for (const StateTensor kind : kStateTensors) total += bytes(kind);
  return total;
}

std::int64_t ShardedStateLayout::frozen_bytes(std::size_t unit, std::int64_t element_bytes) const {
  return units_.at(unit).shard_size(false) * element_bytes;
}

std::int64_t ShardedStateLayout::frozen_bytes(std::int64_t element_bytes) const {
  std::int64_t total = 0;
  for (std::size_t u = 0; u < units_.size(); ++u) total += frozen_bytes(u, element_bytes);
  return total;
}

std::int64_t ShardedStateLayout::quantized_bytes(std::size_t unit, bool double_quant) const {
  return quant::nf4_storage(units_.at(unit).quantized_shard_size(), double_quant).total();
}

std::int64_t ShardedStateLayout::quantized_bytes(bool double_quant) const {
  std::int64_t total = 0;
  for (std::size_t u = 0; u < units_.size(); ++u) total += quantized_bytes(u, double_quant);
  return total;
}

}  // namespace nss::layout

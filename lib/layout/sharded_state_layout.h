// What one rank's sharded training state is, as names, pieces and bytes,
// without libtorch: for every FSDP unit the fp32 master shard of its
// trainable parameters and AdamW's two moments of the same shape (the state
// a checkpoint saves), and the frozen shard (the LoRA base, in the compute
// dtype or in NF4) that a run rebuilds from its weights instead. The preflight's memory model
// counts these bytes, the checkpoint library reads these names, and the trainer's tensors
// (train/sharded_state.h) are laid out by them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "layout/flat_layout.h"

namespace nss::layout {

/// The tensors of a unit's trainable state, each one fp32 flat shard.
enum class StateTensor { kMaster, kExpAvg, kExpAvgSq };
inline constexpr StateTensor kStateTensors[] = {StateTensor::kMaster, StateTensor::kExpAvg,
                                                StateTensor::kExpAvgSq};

/// Bytes per element of every StateTensor (fp32).
inline constexpr std::int64_t kStateElementBytes = 4;

/// The checkpoint name of parameter `param`'s `kind`: the parameter's own
/// Hugging Face name for the master, "optimizer.exp_avg.<param>" and
/// "optimizer.exp_avg_sq.<param>" for the moments.
std::string state_tensor_name(StateTensor kind, const std::string& param);

/// True for the names of optimizer state (a model-only load or an export skips them).
bool is_optimizer_state(const std::string& tensor_name);

/// The rank-file dataset holding unit `unit`'s `kind`: "/model/unit_003",
/// "/optimizer/exp_avg/unit_003", "/optimizer/exp_avg_sq/unit_003".
std::string state_dataset_name(StateTensor kind, std::size_t unit);

/// A logical state tensor: the same on every rank.
struct StateTensorSpec {
  std::string name;
  std::vector<std::int64_t> shape;
};

/// One of this rank's flat state buffers with the tensor pieces it holds
/// (the padding at the end of the last rank's shard belongs to none).
struct StateBuffer {
  std::size_t unit = 0;
  StateTensor kind = StateTensor::kMaster;
  std::string dataset;
  std::int64_t count = 0;  // elements
  struct Piece {
    std::string tensor;
    std::int64_t tensor_offset = 0, length = 0, buffer_offset = 0;
  };
  std::vector<Piece> pieces;
};

class ShardedStateLayout {
 public:
  /// The state of rank `rank` for units laid out by `units` (all at one world size).
  ShardedStateLayout(std::vector<FlatLayout> units, int rank);

  const std::vector<FlatLayout>& units() const { return units_; }
  int rank() const { return rank_; }

  /// Every trainable parameter's master, then every exp_avg, then every exp_avg_sq.
  std::vector<StateTensorSpec> tensors() const;

  /// This rank's buffers: every StateTensor of every unit that trains.
  std::vector<StateBuffer> buffers() const;
  /// The same buffers with only the pieces replica `replica` of `replicas`
  /// writes to a checkpoint: under hybrid sharding the replicas hold the same
  /// shard, and each writes the elements [k·S/R, (k+1)·S/R) of it, so every
  /// element is written once. One replica: buffers().
  std::vector<StateBuffer> buffers_written_by(int replica, int replicas) const;

  /// Bytes of unit `unit`'s `kind` on this rank.
  std::int64_t bytes(std::size_t unit, StateTensor kind) const;
  /// Bytes of `kind` over every unit on this rank.
  std::int64_t bytes(StateTensor kind) const;
  /// Bytes of every StateTensor of every unit: what a checkpoint of this rank copies.
  std::int64_t saved_bytes() const;
  /// Bytes of unit `unit`'s frozen shard held in elements of `element_bytes`.
  std::int64_t frozen_bytes(std::size_t unit, std::int64_t element_bytes) const;
  std::int64_t frozen_bytes(std::int64_t element_bytes) const;
  /// Bytes of unit `unit`'s NF4 shard (QLoRA's quantised projections: codes
  /// and block scales, quant::nf4_storage), and over every unit.
  std::int64_t quantized_bytes(std::size_t unit, bool double_quant) const;
  std::int64_t quantized_bytes(bool double_quant) const;

 private:
  std::vector<FlatLayout> units_;
  int rank_;
};

}  // namespace nss::layout

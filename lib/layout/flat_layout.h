// How one FSDP unit's parameters are laid out: trainable parameters are
// concatenated into one flat buffer and frozen ones (the LoRA base) into
// another, each padded to a multiple of the world size N; rank r owns
// elements [r*S, (r+1)*S) of each, S = padded / N. Frozen parameters stored
// quantised (QLoRA's NF4 base) form a third buffer whose every parameter
// starts at a multiple of kQuantizedGroup elements and whose shards are
// whole groups, because NF4 blocks (64 elements) and the double
// quantisation's groups (256 blocks) restart at each tensor: a rank then
// quantises its shard alone and gets the bytes of the whole tensor's
// quantisation. Pure arithmetic, no torch.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace nss::layout {

struct FlatParam {
  std::string name;  // Hugging Face name
  std::vector<std::int64_t> shape;
  bool trainable = true;
  bool decay = true;       // AdamW weight decay applies
  bool quantized = false;  // a frozen parameter stored quantised (NF4)
  std::int64_t numel() const;
};

/// Where a parameter lives: which flat buffer and at which element offset.
struct FlatSlot {
  bool trainable;
  std::int64_t offset;
  bool quantized = false;  // in the quantised buffer (offset counts its elements)
};

/// A contiguous piece of one parameter inside one rank's shard.
struct ShardPiece {
  std::size_t param;           // index into FlatLayout::params()
  std::int64_t tensor_offset;  // element offset in the row-major flattened parameter
  std::int64_t length;
  std::int64_t shard_offset;  // element offset inside the rank's shard
};

using ElementRanges = std::vector<std::pair<std::int64_t, std::int64_t>>;  // [begin, end)

class FlatLayout {
 public:
  /// Elements per group of the quantised buffer: 256 NF4 blocks of 64.
  static constexpr std::int64_t kQuantizedGroup = 64 * 256;

  /// InternalError for a quantised parameter that is trainable.
  FlatLayout(std::vector<FlatParam> params, int world_size);

  /// Parameters in their original (unit) order.
  const std::vector<FlatParam>& params() const { return params_; }
  /// Position of params()[i] in its flat buffer.
  const FlatSlot& slot(std::size_t i) const { return slots_[i]; }

  int world_size() const { return world_size_; }
  /// Unpadded and padded element counts, and the per-rank shard size, of
  /// the trainable and the (unquantised) frozen buffer.
  std::int64_t numel(bool trainable) const { return trainable ? trainable_numel_ : frozen_numel_; }
  std::int64_t padded(bool trainable) const { return shard_size(trainable) * world_size_; }
  std::int64_t shard_size(bool trainable) const;

  /// The pieces of parameters held by `rank`'s shard of one buffer.
  std::vector<ShardPiece> shard_pieces(bool trainable, int rank) const;

  /// The quantised buffer: its elements up to the last parameter's end, the
  /// per-rank shard (whole groups), the padded total, and a rank's pieces.
  std::int64_t quantized_numel() const { return quantized_numel_; }
  /// The quantised parameters' own elements (quantized_numel() less the
  /// padding that aligns each to a group).
  std::int64_t quantized_parameters() const { return quantized_parameters_; }
  std::int64_t quantized_shard_size() const;
  std::int64_t quantized_padded() const { return quantized_shard_size() * world_size_; }
  std::vector<ShardPiece> quantized_pieces(int rank) const;

  /// Element ranges of `rank`'s trainable shard that get weight decay.
  ElementRanges decay_ranges(int rank) const;

 private:
  std::vector<ShardPiece> pieces(bool trainable, bool quantized, std::int64_t shard,
                                 int rank) const;

  std::vector<FlatParam> params_;
  std::vector<FlatSlot> slots_;
  int world_size_;
  std::int64_t trainable_numel_ = 0;
  std::int64_t frozen_numel_ = 0;
  std::int64_t quantized_numel_ = 0;
  std::int64_t quantized_parameters_ = 0;
};

}  // namespace nss::layout

// Which samples go where: the sampling plan of the training dataloader.
//
// Each epoch visits its samples in the order its SampleOrder gives (windows
// shuffled by SamplePermutation(num_windows, seed, epoch), or rows of packed
// documents, sample_source.h); consecutive runs of global_batch_size
// positions form the global batches. A global batch is split
// into world_size contiguous blocks (rank r takes block r), and a rank's block
// into micro-batches of micro_batch_size. None of this depends on the world
// size except the split, so a position (epoch, cursor) taken at a global-batch
// boundary names the same next samples at any world size.
//
// Epoch boundary: when fewer than global_batch_size positions remain in an
// epoch, they are skipped and the next epoch starts at cursor 0 (the reshuffle
// makes the skipped samples different every epoch).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "data/sample_source.h"

namespace nss::data {

/// Where the loader stands: `cursor` positions of epoch `epoch`'s order have
/// been consumed. Saved in checkpoints (state.data.epoch / state.data.cursor).
struct LoaderPosition {
  std::int64_t epoch = 0;
  std::int64_t cursor = 0;

  bool operator==(const LoaderPosition& other) const {
    return epoch == other.epoch && cursor == other.cursor;
  }
  bool operator!=(const LoaderPosition& other) const { return !(*this == other); }
};

/// The batch arithmetic of one rank.
struct SamplingConfig {
  std::int64_t seq_len = 0;
  std::int64_t global_batch_size = 0;
  std::int64_t micro_batch_size = 0;
  std::int64_t rank = 0;
  std::int64_t world_size = 1;
  std::uint64_t seed = 0;
};

class SamplePlan {
 public:
  /// Validates the arithmetic (UsageError when global_batch_size is not a
  /// multiple of micro_batch_size x world_size) and that epoch 0 holds at
  /// least one global batch (DataError).
  SamplePlan(std::shared_ptr<const SampleOrder> order, const SamplingConfig& config);
  /// Over `num_windows` windows shuffled by (config.seed, epoch).
  SamplePlan(std::int64_t num_windows, const SamplingConfig& config);

  const SamplingConfig& config() const { return config_; }
  const SampleOrder& order() const { return *order_; }
  /// Samples each rank takes from a global batch: global_batch_size / world_size.
  std::int64_t rank_batch_size() const { return rank_batch_size_; }
  /// Micro-batches per rank per global batch (gradient-accumulation steps).
  std::int64_t accumulation_steps() const { return accumulation_steps_; }
  /// Full global batches in `epoch` (the rest of an epoch is skipped).
  std::int64_t batches_per_epoch(std::int64_t epoch) const;

  /// `position` moved to the next epoch when no full global batch is left in its
  /// own; throws DataError for a negative epoch or cursor.
  LoaderPosition normalise(LoaderPosition position) const;
  /// The position `batches` global batches after `start` (both normalised).
  LoaderPosition advance(LoaderPosition start, std::int64_t batches) const;

  /// Sample ids of every sample of the global batch at `position`, in order.
  std::vector<std::int64_t> global_batch(LoaderPosition position) const;
  /// Sample ids of micro-batch `micro` (< accumulation_steps) of this rank
  /// in the global batch at `position`, written to `out` (micro_batch_size).
  void micro_batch(LoaderPosition position, std::int64_t micro, std::int64_t* out) const;

 private:
  SamplingConfig config_;
  std::shared_ptr<const SampleOrder> order_;
  std::int64_t rank_batch_size_;
  std::int64_t accumulation_steps_;
};

}  // namespace nss::data

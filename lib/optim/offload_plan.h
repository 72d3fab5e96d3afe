// The order in which an offloaded optimizer step (optim/offloaded_adamw.h)
// streams the host-resident state of its shards through the device: every
// shard cut into chunks of at most N elements, each chunk staged in one of two
// device slots (double buffering: chunk k + 1 is copied in while chunk k is
// updated), with the weight-decay ranges that fall inside it. Pure
// arithmetic, no libtorch, so the plan is tested on its own and the memory
// model can use the staging size.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace nss::optim {

/// [begin, end) elements, as in AdamWShard::decay_ranges.
using ElementRange = std::pair<std::int64_t, std::int64_t>;

/// Device staging slots: one chunk in transfer while the other is updated.
inline constexpr int kOffloadSlots = 2;
/// The trainer's staging budget (train::ShardedState): 256 MiB, chunks of
/// 11,184,810 elements.
inline constexpr std::int64_t kOffloadStagingBudgetBytes = std::int64_t{256} << 20;
/// Bytes a staged element takes in one slot: fp32 master, exp_avg, exp_avg_sq
/// (the gradient and the compute-dtype shard stay on the device, unstaged).
inline constexpr std::int64_t kOffloadStagedBytesPerElement = 12;

/// One piece of one shard that passes through one staging slot.
struct OffloadChunk {
  std::size_t shard = 0;                   // index into the plan's input
  std::int64_t begin = 0;                  // first element, in the shard
  std::int64_t count = 0;                  // elements, > 0
  int slot = 0;                            // chunk index % kOffloadSlots
  std::vector<ElementRange> decay_ranges;  // decayed elements, relative to begin
};

struct OffloadPlan {
  std::int64_t chunk_elements = 0;   // N: the most elements one chunk may hold
  std::vector<OffloadChunk> chunks;  // in streaming order
  std::array<std::int64_t, kOffloadSlots> slot_elements{};  // largest chunk in each slot

  /// Device memory the slots take: 12 bytes x the elements of each slot.
  std::int64_t staging_bytes() const;
};

/// N for a staging budget: budget / (kOffloadSlots x 12 bytes); throws
/// UsageError when the budget does not hold one element in each slot.
std::int64_t offload_chunk_elements(std::int64_t staging_budget_bytes);

/// The chunks of shards of `shard_elements[i]` elements and weight-decay
/// ranges `decay_ranges[i]` (same length; ranges inside the shard), at most
/// `chunk_elements` each; shards of 0 elements get no chunk. Throws
/// InternalError on inconsistent input.
OffloadPlan plan_offload(const std::vector<std::int64_t>& shard_elements,
                         const std::vector<std::vector<ElementRange>>& decay_ranges,
                         std::int64_t chunk_elements);

}  // namespace nss::optim

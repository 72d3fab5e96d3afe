#include "optim/offload_plan.h"

#include <algorithm>
#include <string>

#include "core/error.h"

namespace nss::optim {

std::int64_t OffloadPlan::staging_bytes() const {
  std::int64_t elements = 0;
  for (const std::int64_t e : slot_elements) elements += e;
  // Each slot holds at most chunk_elements <= budget / 24, so this stays below the budget.
  return elements * kOffloadStagedBytesPerElement;
}

std::int64_t offload_chunk_elements(std::int64_t staging_budget_bytes) {
  constexpr std::int64_t kPerElement = kOffloadSlots * kOffloadStagedBytesPerElement;
  if (staging_budget_bytes < kPerElement)
    throw UsageError(
        "optim",
        "an offloaded optimizer step needs at least " + std::to_string(kPerElement) +
            " bytes of device staging memory (" + std::to_string(kOffloadSlots) + " slots x " +
            std::to_string(kOffloadStagedBytesPerElement) +
            " bytes: fp32 master, exp_avg and exp_avg_sq of one element), got " +
            std::to_string(staging_budget_bytes) + " bytes",
        "give the offloaded step a staging budget of several MiB: chunks of a few million "
        "elements keep the transfers efficient");
  return staging_budget_bytes / kPerElement;
}

OffloadPlan plan_offload(const std::vector<std::int64_t>& shard_elements,
                         const std::vector<std::vector<ElementRange>>& decay_ranges,
                         std::int64_t chunk_elements) {
  NSS_ASSERT(chunk_elements > 0, "optim", "offload chunks must hold at least one element");
  NSS_ASSERT(decay_ranges.size() == shard_elements.size(), "optim",
             "one list of decay ranges per offloaded shard");
  OffloadPlan plan;
  plan.chunk_elements = chunk_elements;
  std::size_t index = 0;
  for (std::size_t shard = 0; shard < shard_elements.size(); ++shard) {
    const std::int64_t elements = shard_elements[shard];
    NSS_ASSERT(elements >= 0, "optim", "shard " + std::to_string(shard) + " has a negative size");
    for (const auto& [begin, end] : decay_ranges[shard])
      NSS_ASSERT(0 <= begin && begin <= end && end <= elements, "optim",
                 "decay range [" + std::to_string(begin) + ", " + std::to_string(end) +
                     ") lies outside shard " + std::to_string(shard) + " of " +
                     std::to_string(elements) + " elements");
    // begin + count never exceeds `elements`, so nothing here can overflow.
    for (std::int64_t begin = 0; begin < elements;) {
      OffloadChunk chunk;
      chunk.shard = shard;
      chunk.begin = begin;
      chunk.count = std::min(chunk_elements, elements - begin);
      chunk.slot = static_cast<int>(index % kOffloadSlots);
      const std::int64_t end = begin + chunk.count;
      // Input order is kept (overlapping ranges decay twice, as in AdamW::step).
      for (const auto& [range_begin, range_end] : decay_ranges[shard]) {
        const std::int64_t from = std::max(range_begin, begin);
        const std::int64_t to = std::min(range_end, end);
        if (from < to) chunk.decay_ranges.emplace_back(from - begin, to - begin);
      }
      auto& slot = plan.slot_elements[static_cast<std::size_t>(chunk.slot)];
      slot = std::max(slot, chunk.count);
      plan.chunks.push_back(std::move(chunk));
      begin = end;
      ++index;
    }
  }
  return plan;
}

}  // namespace nss::optim

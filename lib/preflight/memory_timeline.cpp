#include "preflight/memory_timeline.h"

#include "core/error.h"

namespace nss::preflight {

const char* memory_part_name(MemoryPart part) {
  switch (part) {
    case MemoryPart::kMasters:
      return "master_shards";
    case MemoryPart::kGradients:
      return "gradient_shards";
    case MemoryPart::kOptimizerState:
      return "optimizer_moments";
    case MemoryPart::kFrozenShards:
      return "frozen_shards";
    case MemoryPart::kRopeTables:
      return "rope_tables";
    case MemoryPart::kBatchTokens:
      return "batch_tokens";
    case MemoryPart::kGatheredParameters:
      return "gathered_parameters";
    case MemoryPart::kBoundaryActivations:
      return "boundary_activations";
    case MemoryPart::kUnitWorkingSet:
      return "unit_working_set";
    case MemoryPart::kHeadLogits:
      return "head_logits";
    case MemoryPart::kUnitGradientBuffers:
      return "unit_gradient_buffers";
    case MemoryPart::kOptimizerTemporaries:
      return "optimizer_temporaries";
    case MemoryPart::kPerExampleGradients:
      return "per_example_gradients";
    case MemoryPart::kClippedSums:
      return "clipped_gradient_sums";
    case MemoryPart::kCount:
      break;
  }
  return "unknown";
}

void MemoryTimeline::allocate(const std::string& name, std::uint64_t bytes, MemoryPart part) {
  NSS_ASSERT(live_.count(name) == 0, "preflight", "memory model: " + name + " allocated twice");
  live_.emplace(name, Allocation{bytes, part});
  now_ += bytes;
  parts_[static_cast<std::size_t>(part)] += bytes;
  record_peak(0, part);
}

void MemoryTimeline::free(const std::string& name) {
  const auto it = live_.find(name);
  NSS_ASSERT(it != live_.end(), "preflight", "memory model: " + name + " freed but not live");
  now_ -= it->second.bytes;
  parts_[static_cast<std::size_t>(it->second.part)] -= it->second.bytes;
  live_.erase(it);
}

void MemoryTimeline::free_if_live(const std::string& name) {
  if (live(name)) free(name);
}

void MemoryTimeline::free_matching(const std::string& prefix) {
  for (auto it = live_.lower_bound(prefix);
       it != live_.end() && it->first.compare(0, prefix.size(), prefix) == 0;) {
    const std::string name = (it++)->first;
    free(name);
  }
}

void MemoryTimeline::transient(std::uint64_t bytes, MemoryPart part) {
  record_peak(bytes, part);
}

void MemoryTimeline::rename(const std::string& from, const std::string& to) {
  const auto it = live_.find(from);
  NSS_ASSERT(it != live_.end() && live_.count(to) == 0, "preflight",
             "memory model: cannot rename " + from + " to " + to);
  const Allocation allocation = it->second;
  live_.erase(it);
  live_.emplace(to, allocation);
}

void MemoryTimeline::record_peak(std::uint64_t extra, MemoryPart extra_part) {
  if (now_ + extra <= peak_) return;
  peak_ = now_ + extra;
  peak_parts_ = parts_;
  peak_parts_[static_cast<std::size_t>(extra_part)] += extra;
  peak_phase_ = phase_;
}

}  // namespace nss::preflight

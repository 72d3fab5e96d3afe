// A replay of a training step's tensor allocations in program order, without
// tensors: named allocations and frees, each charged to a component, with the
// running total and the component breakdown at its highest point. The memory
// model (memory_model.h) drives it with what libtorch and the FSDP unit
// function allocate, so the predicted peak is the peak of the sequence, not a
// sum of parts that never coexist.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>

namespace nss::preflight {

/// What an allocation is charged to (preflight.json memory.components).
enum class MemoryPart {
  kMasters,               // fp32 master shards
  kGradients,             // fp32 shard gradients (accumulated across micro-batches)
  kOptimizerState,        // AdamW exp_avg and exp_avg_sq
  kFrozenShards,          // LoRA base shards in the compute dtype
  kRopeTables,            // rotary cos/sin tables
  kBatchTokens,           // the micro-batch's input and target ids
  kGatheredParameters,    // all-gathered unit parameters (tied embedding again in the head)
  kBoundaryActivations,   // unit inputs kept for backward, selective recompute's kept attention
  kUnitWorkingSet,        // a unit's recompute graph and its backward temporaries
  kHeadLogits,            // the head's [B, S, vocab] logits, log-softmax and their gradients
  kUnitGradientBuffers,   // per-parameter gradients, the flat fp32 gradient, the new shard gradient
  kOptimizerTemporaries,  // AdamW's per-unit temporaries
  kPerExampleGradients,   // DP-SGD: each example's gradient of each unit, until the clip
  kClippedSums,           // DP-SGD: each unit's clipped sum (unsharded fp32), until the step's end
  kCount
};

/// The component's name in preflight.json, e.g. "gathered_parameters".
const char* memory_part_name(MemoryPart part);

class MemoryTimeline {
 public:
  /// Allocates `bytes` under `name` (which must not be live).
  void allocate(const std::string& name, std::uint64_t bytes, MemoryPart part);
  /// Frees a live allocation; freeing a name that is not live is a bug.
  void free(const std::string& name);
  /// Frees `name` when it is live (tensors kept alive by optional holders).
  void free_if_live(const std::string& name);
  /// Frees every live allocation whose name starts with `prefix`, one by one.
  void free_matching(const std::string& prefix);
  bool live(const std::string& name) const { return live_.count(name) != 0; }
  /// A temporary of `bytes` that exists only for a moment on top of what is live.
  void transient(std::uint64_t bytes, MemoryPart part);
  /// Renames a live allocation (the same storage handed on under a new role).
  void rename(const std::string& from, const std::string& to);
  /// Sets where later peaks are said to happen, e.g. "backward of unit 3".
  void set_phase(std::string phase) { phase_ = std::move(phase); }

  std::uint64_t now() const { return now_; }
  std::uint64_t peak() const { return peak_; }
  const std::string& peak_phase() const { return peak_phase_; }
  /// Bytes of each component at the peak (they sum to peak()).
  const std::array<std::uint64_t, static_cast<std::size_t>(MemoryPart::kCount)>& peak_parts()
      const {
    return peak_parts_;
  }

 private:
  struct Allocation {
    std::uint64_t bytes;
    MemoryPart part;
  };
  void record_peak(std::uint64_t extra, MemoryPart extra_part);

  std::map<std::string, Allocation> live_;
  std::array<std::uint64_t, static_cast<std::size_t>(MemoryPart::kCount)> parts_{};
  std::array<std::uint64_t, static_cast<std::size_t>(MemoryPart::kCount)> peak_parts_{};
  std::uint64_t now_ = 0;
  std::uint64_t peak_ = 0;
  std::string phase_;
  std::string peak_phase_;
};

}  // namespace nss::preflight

// The memory model's (memory_model.h) gathered parameters: each FSDP unit's
// all-gathered buffers on the replayed timeline — the compute-dtype cast of
// the shard they are sent from, QLoRA's NF4 bytes dequantised, the
// neighbour's gather prefetched on a GPU (ShardOptions::prefetch) — from
// the unit's gather to its release.
#pragma once

#include <cstdint>
#include <string>

#include "layout/sharded_state_layout.h"
#include "preflight/memory_timeline.h"

namespace nss::preflight {

class GatherReplay {
 public:
  struct Options {
    std::uint64_t compute_bytes = 4;  // per element of the gathered buffers
    bool double_quant = false;        // NF4 block scales quantised too
    bool prefetch = false;            // the neighbour's gather started early (CUDA)
    bool offloaded = false;           // the compute-dtype shard exists: no cast to send
    bool tied = false;                // the head gathers the embedding too
  };

  GatherReplay(MemoryTimeline& timeline, const layout::ShardedStateLayout& state, Options options);

  /// `unit`'s gathered buffers under `prefix` + "params" (the head's tied
  /// embedding under `prefix` + "tied"): taken from a prefetch when one
  /// started, else gathered now.
  void gather_unit(int unit, const std::string& prefix);
  /// Starts `unit`'s gather ahead (a no-op without prefetch or out of range).
  void prefetch(int unit);
  /// Frees what gather_unit allocated under `prefix`.
  void release(const std::string& prefix);

 private:
  const layout::FlatLayout& layout(int unit) const;
  bool quantized(int unit) const;
  std::uint64_t gathered_elements(int unit) const;
  std::uint64_t gathered_nf4_bytes(int unit) const;
  std::uint64_t dequantize_scratch(int unit) const;
  void gather(int unit, const std::string& name);
  void dequantize(int unit, const std::string& name);

  MemoryTimeline& t_;
  const layout::ShardedStateLayout& state_;
  Options o_;
  int last_;
};

}  // namespace nss::preflight

#include "preflight/gather_replay.h"

#include <algorithm>

#include "quant/nf4_storage.h"

namespace nss::preflight {
namespace {

using Part = MemoryPart;

std::uint64_t u64(std::int64_t v) {
  return static_cast<std::uint64_t>(v);
}

std::string id(const char* what, int unit) {
  return what + std::to_string(unit);
}

}  // namespace

GatherReplay::GatherReplay(MemoryTimeline& timeline, const layout::ShardedStateLayout& state,
                           Options options)
    : t_(timeline), state_(state), o_(options), last_(static_cast<int>(state.units().size()) - 1) {}

const layout::FlatLayout& GatherReplay::layout(int unit) const {
  return state_.units()[static_cast<std::size_t>(unit)];
}

bool GatherReplay::quantized(int unit) const {
  return layout(unit).quantized_numel() > 0;
}

// Elements of a unit's gathered buffers: every rank's shard of both.
std::uint64_t GatherReplay::gathered_elements(int unit) const {
  return u64(layout(unit).padded(true) + layout(unit).padded(false));
}

// A unit's gathered NF4 bytes (codes and scales of every rank's shard).
std::uint64_t GatherReplay::gathered_nf4_bytes(int unit) const {
  return u64(quant::nf4_storage(layout(unit).quantized_padded(), o_.double_quant).total());
}

// Dequantisation's working memory: nothing but the block scales of one
// tensor on the host (table loops); on a GPU the torch operations hold an
// int64 index, the looked-up levels, the repeated scales and their product
// for the largest tensor, 16 bytes per element.
std::uint64_t GatherReplay::dequantize_scratch(int unit) const {
  std::int64_t largest = 0;
  for (const auto& p : layout(unit).params())
    if (p.quantized) largest = std::max(largest, p.numel());
  return u64(largest) * (o_.prefetch ? 16 : 1);
}

// FSDP all-gather of a unit's trainable and frozen buffers in the compute dtype.
void GatherReplay::gather(int unit, const std::string& name) {
  t_.allocate(name, gathered_elements(unit) * o_.compute_bytes, Part::kGatheredParameters);
  // The master's cast to send (offloaded: the compute-dtype shard is sent).
  if (o_.compute_bytes != 4 && !o_.offloaded)
    t_.transient(u64(layout(unit).shard_size(true)) * o_.compute_bytes, Part::kGatheredParameters);
  if (!quantized(unit)) return;
  t_.allocate(name + ".nf4", gathered_nf4_bytes(unit), Part::kGatheredParameters);
  dequantize(unit, name);
}

// The gathered NF4 bytes become the compute-dtype buffer of the quantised
// projections, then go.
void GatherReplay::dequantize(int unit, const std::string& name) {
  t_.allocate(name + ".dequantized", u64(layout(unit).quantized_padded()) * o_.compute_bytes,
              Part::kGatheredParameters);
  t_.transient(dequantize_scratch(unit), Part::kGatheredParameters);
  t_.free(name + ".nf4");
}

// A unit's own gather takes the prefetched buffers when its neighbour
// started them (the cast shard they were sent from dies with the wait).
void GatherReplay::gather_unit(int unit, const std::string& prefix) {
  if (t_.live(id("prefetched", unit))) {
    t_.rename(id("prefetched", unit), prefix + "params");
    t_.free_if_live(id("prefetch_send", unit));
    if (quantized(unit)) {  // prefetched as NF4 bytes, dequantised now
      t_.rename(id("prefetched_nf4", unit), prefix + "params.nf4");
      dequantize(unit, prefix + "params");
    }
  } else {
    gather(unit, prefix + "params");
  }
  if (unit == last_ && o_.tied) gather(0, prefix + "tied");
}

// The neighbour's gather starts before this unit computes and holds its
// buffers (the bf16 cast of the shard too) until the neighbour takes them.
void GatherReplay::prefetch(int unit) {
  if (!o_.prefetch || unit < 0 || unit > last_) return;
  t_.allocate(id("prefetched", unit), gathered_elements(unit) * o_.compute_bytes,
              Part::kGatheredParameters);
  if (quantized(unit))
    t_.allocate(id("prefetched_nf4", unit), gathered_nf4_bytes(unit), Part::kGatheredParameters);
  if (o_.compute_bytes != 4 && !o_.offloaded)
    t_.allocate(id("prefetch_send", unit), u64(layout(unit).shard_size(true)) * o_.compute_bytes,
                Part::kGatheredParameters);
}

void GatherReplay::release(const std::string& prefix) {
  t_.free(prefix + "params");
  t_.free_if_live(prefix + "params.dequantized");
  t_.free_if_live(prefix + "tied");
}

}  // namespace nss::preflight

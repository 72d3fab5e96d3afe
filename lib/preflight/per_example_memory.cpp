#include "preflight/per_example_memory.h"

namespace nss::preflight {
namespace {

using Part = MemoryPart;

std::uint64_t u64(std::int64_t v) {
  return static_cast<std::uint64_t>(v);
}

std::string per_example_id(int unit, std::size_t param) {
  return "per_example" + std::to_string(unit) + "." + std::to_string(param);
}

}  // namespace

std::string clipped_sum_id(int unit) {
  return "sums" + std::to_string(unit) + ".";
}

// A parameter at a time: converted to fp32 (bf16 runs), then its squared
// norms in fp64. Autograd hands each gradient as a transposed view, so
// flattening it copies: the copy, its fp64 cast and square live together.
void hold_per_example(MemoryTimeline& t, const layout::FlatLayout& layout, int unit,
                      const std::string& grads_prefix, std::int64_t rows,
                      std::int64_t compute_bytes) {
  t.free_matching(grads_prefix);
  const auto& params = layout.params();
  for (std::size_t i = 0; i < params.size(); ++i)
    if (params[i].trainable)
      t.allocate(per_example_id(unit, i), u64(rows * params[i].numel() * compute_bytes),
                 Part::kPerExampleGradients);
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (!params[i].trainable) continue;
    const std::uint64_t elements = u64(rows * params[i].numel());
    if (compute_bytes != 4) {
      t.free(per_example_id(unit, i));
      t.allocate(per_example_id(unit, i), elements * 4, Part::kPerExampleGradients);
    }
    t.transient(elements * (4 + 8 + 8), Part::kPerExampleGradients);
  }
  if (!t.live("norms")) t.allocate("norms", u64(rows) * 8, Part::kPerExampleGradients);
}

// Each parameter's clipped gradient (its per-example gradients copied
// contiguous for the product) is added to its sum, the new sum beside the
// old; then its per-example gradients go.
void clip_per_example(MemoryTimeline& t, const std::vector<layout::FlatLayout>& units,
                      std::int64_t rows) {
  t.set_phase("per-example clipping");
  for (int u = static_cast<int>(units.size()) - 1; u >= 0; --u) {  // in the backward's order
    const layout::FlatLayout& layout = units[static_cast<std::size_t>(u)];
    const auto& params = layout.params();
    for (std::size_t i = 0; i < params.size(); ++i) {
      if (!t.live(per_example_id(u, i))) continue;
      const std::uint64_t sum_copies = t.live(clipped_sum_id(u)) ? 2 : 1;
      t.transient(4 * u64(params[i].numel()) * (u64(rows) + sum_copies), Part::kClippedSums);
      t.free(per_example_id(u, i));
    }
    if (layout.numel(true) > 0 && !t.live(clipped_sum_id(u)))
      t.allocate(clipped_sum_id(u), u64(layout.numel(true)) * 4, Part::kClippedSums);
  }
  t.free_if_live("norms");
}

}  // namespace nss::preflight

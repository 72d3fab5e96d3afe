// DP-SGD's additions to the replayed step (memory_model.h), in closed form
// per FSDP unit on a MemoryTimeline, as fsdp/per_example_gradients.h makes
// them: each unit's per-example gradients, held from its backward until the
// micro-batch's clip, and its clipped sum, held until the step's end.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "layout/flat_layout.h"
#include "preflight/memory_timeline.h"

namespace nss::preflight {

/// The name of unit `unit`'s clipped sum, also the prefix a reduction frees.
std::string clipped_sum_id(int unit);

/// After unit `unit`'s backward: its parameter gradients (live under
/// `grads_prefix`, [rows, shape] in the compute dtype of `compute_bytes`)
/// become per-example gradients in fp32, their squared norms taken in fp64.
void hold_per_example(MemoryTimeline& timeline, const layout::FlatLayout& layout, int unit,
                      const std::string& grads_prefix, std::int64_t rows,
                      std::int64_t compute_bytes);

/// After a micro-batch's backward: every unit's per-example gradients are
/// clipped into its clipped sum (allocated at the first clip) and freed.
void clip_per_example(MemoryTimeline& timeline, const std::vector<layout::FlatLayout>& units,
                      std::int64_t rows);

}  // namespace nss::preflight

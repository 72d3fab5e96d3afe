// The checkpoint directory and the step a run resumes from, checked before the
// verdict: a run whose final save cannot be written, or whose resume path is
// not a checkpoint, must not start (docs/preflight.md, "Checkpoints").
#pragma once

#include <cstdint>

#include "config/config.h"
#include "preflight/check.h"
#include "preflight/context.h"

namespace nss::preflight {

/// Bytes of one checkpoint of the whole job: every rank's fp32 masters and
/// AdamW moments (layout::ShardedStateLayout::saved_bytes) plus each rank
/// file's HDF5 overhead.
std::uint64_t predicted_checkpoint_bytes(const config::Config& config, int world_size);

/// `checkpoint.directory` (exit 5): every rank created checkpoint.dir and
/// wrote, synced and removed a file in it within the deadline.
Check check_checkpoint_directory(const PreflightContext& context);

/// `checkpoint.space` (exit 3): the least free space any rank sees in
/// checkpoint.dir against one checkpoint (fail) and the checkpoints the run
/// keeps at once (warn).
Check check_checkpoint_space(const PreflightContext& context);

/// `checkpoint.resume` (exit 5): what checkpoint.resume will read exists and
/// has the structure of a committed step (metadata.json parses, every rank
/// file has its recorded size); checksums are verified by the resume itself.
Check check_checkpoint_resume(const PreflightContext& context);

}  // namespace nss::preflight

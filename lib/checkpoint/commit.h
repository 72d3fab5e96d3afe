// Rank 0's side of the commit protocol (see save.h): preparing step_X.tmp/,
// turning it into a committed step, pruning, and cleaning up after failures.
#pragma once

#include <cstdint>
#include <string>

#include "checkpoint/index.h"

namespace nss::checkpoint {

/// Creates `checkpoint_dir` if needed, removes leftovers of interrupted saves
/// and prunes (step_*.tmp, step_*.old), and creates an empty step_X.tmp/.
/// Throws CheckpointError when step X is already committed (never overwritten)
/// or the directory cannot be written.
void prepare_step_directory(const std::string& checkpoint_dir, std::int64_t step);

/// Checks that `index`'s chunks tile every tensor, writes metadata.json into
/// step_X.tmp/ (tmp + rename + fsync), renames step_X.tmp/ to step_X/, fsyncs
/// the checkpoint directory, replaces `latest` and prunes to `keep_last`
/// committed steps (0: keep all). Throws CheckpointError when the step could
/// not be committed; problems after the rename (latest, pruning) are logged,
/// since the step is committed by then.
void commit_step(const std::string& checkpoint_dir, const CheckpointIndex& index,
                 std::int64_t keep_last);

/// Removes an uncommitted step_X.tmp/ after a failed save (best effort, logged).
void discard_step_directory(const std::string& tmp_dir);

/// Moves step `step`, which a resume found damaged, to step_X.corrupt-<time>/
/// (kept for inspection, never loaded or pruned) and points `latest` at
/// `loaded`, the step the resume fell back to. Returns the new path; throws
/// CheckpointError when the rename fails.
std::string set_aside_damaged_step(const std::string& checkpoint_dir, std::int64_t step,
                                   std::int64_t loaded);

/// Removes committed steps beyond the newest `keep_last`, keeping `protect`
/// too; each is first renamed to step_X.old/ so that a crash mid-removal never
/// leaves a half-deleted directory that looks committed.
void prune_steps(const std::string& checkpoint_dir, std::int64_t keep_last, std::int64_t protect);

}  // namespace nss::checkpoint

// Rank 0's side of the commit protocol (see save.h): preparing a step's
// in-progress directory, turning it into a committed step, pruning, and
// cleaning up after failures. step_directory.h names the directories.
#pragma once

#include <cstdint>
#include <string>

#include "checkpoint/index.h"

namespace nss::checkpoint {

/// Creates `checkpoint_dir` if needed, removes leftovers of interrupted saves
/// and prunes (leftover_dirs), and creates step X's empty in-progress directory.
/// Throws CheckpointError when step X is already committed (never overwritten)
/// or the directory cannot be written.
void prepare_step_directory(const std::string& checkpoint_dir, std::int64_t step);

/// Checks that `index`'s chunks tile every tensor, writes metadata.json into
/// the in-progress directory (tmp + rename + fsync), renames it to the
/// committed name, fsyncs
/// the checkpoint directory, replaces `latest` and prunes to `keep_last`
/// committed steps (0: keep all). Throws CheckpointError when the step could
/// not be committed; problems after the rename (latest, pruning) are logged,
/// since the step is committed by then.
void commit_step(const std::string& checkpoint_dir, const CheckpointIndex& index,
                 std::int64_t keep_last);

/// Removes an uncommitted in-progress directory after a failed save (best
/// effort, logged).
void discard_step_directory(const std::string& tmp_dir);

/// Sets step `step`, which a resume found damaged, aside (step_corrupt_path:
/// kept for inspection, never loaded or pruned) and points `latest` at
/// `loaded`, the step the resume fell back to. Returns the new path; throws
/// CheckpointError when the rename fails.
std::string set_aside_damaged_step(const std::string& checkpoint_dir, std::int64_t step,
                                   std::int64_t loaded);

/// Removes committed steps beyond the newest `keep_last`, keeping `protect`
/// too; each is first renamed to its pruned name (step_pruned_path) so that a
/// crash mid-removal never
/// leaves a half-deleted directory that looks committed.
void prune_steps(const std::string& checkpoint_dir, std::int64_t keep_last, std::int64_t protect);

}  // namespace nss::checkpoint

// Names and states of step directories inside a checkpoint directory:
//   step_00000100/      committed (renamed into place after metadata.json was written)
//   step_00000100.tmp/  being written, or left by a crash: never loaded
//   step_00000100.old/  being pruned: never loaded
//   step_00000100.corrupt-20261124T081500Z/  found damaged by a resume and set
//                       aside (never loaded, never pruned, never deleted)
//   latest              text file naming the newest committed step
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nss::checkpoint {

inline constexpr const char* kLatestFile = "latest";

/// "step_00000100".
std::string step_dir_name(std::int64_t step);

/// "<dir>/step_00000100".
std::string step_dir_path(const std::string& checkpoint_dir, std::int64_t step);

/// "<dir>/step_00000100.tmp": where a save writes until the commit renames it.
std::string step_tmp_path(const std::string& checkpoint_dir, std::int64_t step);

/// "<dir>/step_00000100.old": where a prune moves a step before removing it.
std::string step_pruned_path(const std::string& checkpoint_dir, std::int64_t step);

/// True for a committed step directory: it holds metadata.json (the commit
/// writes it last, before the rename).
bool is_step_directory(const std::string& path);

/// "rank_00003.h5".
std::string rank_file_name(int rank);

/// The step number of a committed directory name ("step_00000100" -> 100), else nullopt.
std::optional<std::int64_t> parse_step_dir_name(const std::string& name);

/// What a step directory's name says it is (the list above).
enum class StepDirectoryState {
  kCommitted,   // step_N
  kInProgress,  // step_N.tmp
  kPruned,      // step_N.old
  kSetAside,    // step_N.corrupt-<time>
};

struct StepDirectoryName {
  std::int64_t step = 0;
  StepDirectoryState state = StepDirectoryState::kCommitted;
};

/// The step and state a directory name gives, or nullopt for any other name.
std::optional<StepDirectoryName> classify_step_dir_name(const std::string& name);

/// Committed steps (directories named step_N that hold metadata.json), newest first.
std::vector<std::int64_t> committed_steps(const std::string& checkpoint_dir);

/// The step named by `<dir>/latest`, or nullopt when it is missing or does not parse.
std::optional<std::int64_t> read_latest(const std::string& checkpoint_dir);

/// Replaces `<dir>/latest` atomically with the name of `step`.
void write_latest(const std::string& checkpoint_dir, std::int64_t step);

/// "<dir>/step_00000100.corrupt-<UTC time>": where a resume sets a damaged step aside.
std::string step_corrupt_path(const std::string& checkpoint_dir, std::int64_t step);

/// Throws CheckpointError (exit 5) when `checkpoint_dir` holds committed
/// steps: a run that starts fresh there would collide with them or prune them.
void check_fresh_start(const std::string& checkpoint_dir);

/// Directories left by interrupted saves or prunes (step_*.tmp, step_*.old).
std::vector<std::string> leftover_dirs(const std::string& checkpoint_dir);

}  // namespace nss::checkpoint

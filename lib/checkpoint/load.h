// Loading a committed step into this rank's buffers, at any world size: each
// rank reads only the element ranges its pieces need (HDF5 hyperslabs of
// whichever rank files hold them) and verifies every checksum block it reads.
// Resolution for checkpoint.resume picks the newest committed step that loads
// cleanly and falls back, loudly, past steps that do not.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checkpoint/layout.h"
#include "comm/agreement.h"
#include "comm/communicator.h"
#include "config/resume_setting.h"

namespace nss::checkpoint {

/// Why a readable step does not suit this run, and what to do.
struct Refusal {
  std::string message, hint;
};

struct LoadOptions {
  bool load_optimizer = true;  // false: leave "optimizer.*" pieces untouched
  bool file_locking = true;    // checkpoint.hdf5_file_locking
  /// Runs on rank 0 before any tensor is read. Throws CheckpointError when
  /// the step's saved training state cannot be read (a damaged step, like
  /// any other damage); returns a Refusal when it reads but does not suit
  /// this run.
  std::function<std::optional<Refusal>(const nlohmann::json& state, const std::string& step_dir)>
      accept_state;
};

/// A step that LoadOptions::accept_state refused, thrown on every rank (exit
/// 5). A resume does not fall back past it: an older step of the same run
/// would not suit either.
struct IncompatibleCheckpoint : comm::AgreedError {
  explicit IncompatibleCheckpoint(const Refusal& refusal)
      : AgreedError(ExitCode::kCheckpoint, "checkpoint", refusal.message, refusal.hint) {}
};

/// A step that every rank agrees is damaged (checkpoint::CheckpointDamage on
/// each rank that failed: a checksum, a recorded size, metadata.json), as
/// opposed to one that could not be read (an I/O error may be transient).
struct DamagedStep : comm::AgreedError {
  explicit DamagedStep(const comm::AgreedError& error)
      : AgreedError(error.code(), error.component(), error.message(), error.hint()) {}
};

struct LoadResult {
  std::string step_dir;
  std::int64_t step = 0;
  int saved_world_size = 0;
  nlohmann::json state;          // metadata.json "state", as saved
  nlohmann::json secrets;        // metadata.json "secrets": the secret sections (may be empty)
  std::uint64_t bytes_read = 0;  // by this rank
  double seconds = 0;
  std::vector<std::string> rejected_steps;  // newer steps skipped, each with the reason
  std::vector<std::int64_t> damaged_steps;  // of those, the ones every rank found damaged
};

/// Loads the committed step in `step_dir` into `buffers` (collective). Every
/// target tensor must exist in the step with the same shape and dtype
/// (optimizer tensors only when options.load_optimizer). Throws
/// comm::AgreedError with ExitCode::kCheckpoint, identical on every rank, when
/// anything is missing, mismatched or fails its checksum (the buffers are then
/// partly overwritten) — DamagedStep when every failing rank found damage —
/// and IncompatibleCheckpoint when accept_state refuses the step or it lacks
/// a tensor this run needs or holds it in another shape (before any buffer
/// changes).
LoadResult load_checkpoint(comm::Communicator& comm, const std::string& step_dir,
                           const std::vector<TensorSpec>& tensors,
                           const std::vector<ShardBuffer>& buffers, const LoadOptions& options);

/// checkpoint.resume: never returns nullopt; auto loads the newest
/// committed step in `checkpoint_dir` that loads cleanly, skipping broken ones
/// with a warning naming file, tensor and block (LoadResult::damaged_steps
/// lists the damaged ones), and returns nullopt when there is no committed
/// step at all; any other value is a step directory (loaded
/// without fallback) or a checkpoint directory (resolved like auto). Throws
/// comm::AgreedError (ExitCode::kCheckpoint) when steps exist but none loads,
/// and IncompatibleCheckpoint as soon as accept_state refuses a step.
std::optional<LoadResult> resume_checkpoint(comm::Communicator& comm,
                                            const std::string& checkpoint_dir,
                                            const config::ResumeSetting& resume,
                                            const std::vector<TensorSpec>& tensors,
                                            const std::vector<ShardBuffer>& buffers,
                                            const LoadOptions& options);

}  // namespace nss::checkpoint

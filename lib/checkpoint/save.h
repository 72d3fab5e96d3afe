// Saving a step from every rank with the atomic commit protocol (the
// directory names and states are step_directory.h's):
//   1. rank 0 refuses a step that is already committed, clears leftovers of
//      interrupted saves and creates the step's in-progress directory;
//   2. every rank writes rank_NNNNN.h5 into it (checksums computed while
//      writing, non-finite values refused) and fsyncs it;
//   3. success is agreed by all ranks (a failure anywhere fails everywhere);
//   4. rank 0 checks that the chunks tile every tensor, writes metadata.json
//      (tmp + rename), renames the in-progress directory to the step's
//      committed name, fsyncs the parent,
//      replaces `latest`, and prunes steps beyond keep_last (never the newest).
// A directory becomes a committed step only by that rename.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checkpoint/index.h"
#include "checkpoint/layout.h"
#include "comm/communicator.h"

namespace nss::checkpoint {

struct SaveRequest {
  std::string checkpoint_dir;                       // checkpoint.dir, e.g. <run>/checkpoints
  std::int64_t step = 0;                            // identical on every rank
  std::vector<TensorSpec> tensors;                  // every logical tensor, identical on every rank
  nlohmann::json state = nlohmann::json::object();  // rank 0's copy goes to metadata.json
  /// The secret sections (stateful_component.h), kept in metadata.json
  /// "secrets" only (never in "state", which exports copy). Empty: none.
  nlohmann::json secrets = nlohmann::json::object();
  std::int64_t keep_last = 3;  // committed steps kept after this one commits; 0 keeps all
  bool file_locking = true;    // checkpoint.hdf5_file_locking
  std::uint64_t checksum_block_bytes = kDefaultChecksumBlockBytes;
  std::uint64_t slice_bytes = 4u << 20;  // most bytes per HDF5 write call (a few ms of lock)
};

struct SaveResult {
  std::int64_t step = 0;
  std::string step_dir;         // the committed directory
  std::uint64_t bytes = 0;      // all rank files together
  double seconds = 0;           // wall time of the save on this rank
  double blocking_seconds = 0;  // what the caller waited (== seconds for a synchronous save)
};

/// Saves `buffers` of every rank as step `request.step` (collective over `comm`).
/// Throws comm::AgreedError, identical on every rank, when the step was not
/// committed: code() is ExitCode::kCheckpoint for I/O failures (disk full,
/// permissions), a step already committed, or a non-finite value; kUsage for an
/// invalid buffer layout (a caller bug). Nothing partial is ever committed.
SaveResult save_checkpoint(comm::Communicator& comm, const SaveRequest& request,
                           const std::vector<ShardBuffer>& buffers);

}  // namespace nss::checkpoint

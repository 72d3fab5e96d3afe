// A human-readable description of a committed step, as `nss_ckpt inspect`
// prints it: format, files and their sizes, every tensor with its shape, dtype
// and chunks per rank file, and the training state.
#pragma once

#include <string>

namespace nss::checkpoint {

/// Describes `step_dir` from its metadata.json; throws CheckpointError when the
/// index is missing or invalid.
std::string describe_checkpoint(const std::string& step_dir);

}  // namespace nss::checkpoint

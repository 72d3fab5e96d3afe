// A run's identity across restarts: an id made at its first start and kept in
// <run>/run_id, recorded in every checkpoint step it saves, so that a resume
// never continues another run's steps found in a shared checkpoint.dir.
#pragma once

#include <string>

namespace nss::train {

/// The id of the run in `run_dir`: the content of <run_dir>/run_id, or a new
/// one (UTC start time and 64 random bits) written there atomically on the
/// first start. Throws UsageError when it cannot be read or written.
std::string run_identity(const std::string& run_dir);

}  // namespace nss::train

// The tools that read a step (nss_ckpt verify, nss_consolidate, nss_eval) read
// committed steps only: a directory named step_N (digits, no suffix) holding
// metadata.json. A save in progress (or one a crash interrupted) and a step
// being pruned have other names (step_directory.h): their files may be
// incomplete or half gone.
#pragma once

#include <string>

namespace nss::checkpoint {

/// True for a directory meant as a step, committed or not: a name
/// classify_step_dir_name knows, or one holding metadata.json.
bool names_a_step(const std::string& path);

/// Throws CheckpointError (exit 5) unless `path` is a committed step directory;
/// the message says what it is instead (never committed, being pruned, no
/// metadata.json, not named step_N) and the hint names the committed step of
/// its checkpoint directory to use (the one `latest` names, else the newest).
void require_committed_step(const std::string& path);

}  // namespace nss::checkpoint

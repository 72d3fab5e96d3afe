// Process-wide logging on spdlog. Every line carries the rank; rank 0 writes
// to the console, every rank to <run>/logs/rank_NNNNN.log once the run
// directory exists. Components log with spdlog::info(...) and friends.
#pragma once

#include <string>

namespace nss::log {

/// Creates the default logger for this rank: rank 0 prints at the configured
/// level to stderr, other ranks print only errors (their full log goes to file).
void init(int rank);

/// Adds `<logs_dir>/rank_NNNNN.log` (appending, so a requeued job keeps
/// history) for the rest of the process, so that its last error lands there
/// too. A file already attached is not added again (nss_synthesize runs
/// nss_hpc's job twice in one process).
void attach_rank_file(const std::string& logs_dir, int rank);

/// Sets the level from logging.level: trace, debug, info, warn, error.
void set_level(const std::string& level);

/// Flushes every sink; call before exiting or aborting.
void flush();

/// Path of this rank's log file within a run's logs directory.
std::string rank_log_path(const std::string& logs_dir, int rank);

}  // namespace nss::log

// Process-wide logging on spdlog. Every line carries the rank; rank 0 writes
// to the console, every rank to <run>/logs/rank_NNNNN.log once the run
// directory exists. Components log with spdlog::info(...) and friends.
#pragma once

#include <string>

namespace nss::log {

/// Creates the default logger for this rank: rank 0 prints at the configured
/// level to stderr, other ranks print only errors (their full log goes to file).
void init(int rank);

/// Adds `<logs_dir>/rank_NNNNN.log` (appending, so a requeued job keeps history).
void attach_rank_file(const std::string& logs_dir, int rank);

/// attach_rank_file for a scope: the file is detached (flushed) when it ends,
/// so a process that runs several jobs (nss_synthesize) logs each into its
/// own directory.
class RankFileScope {
 public:
  RankFileScope(const std::string& logs_dir, int rank);
  ~RankFileScope();
  RankFileScope(const RankFileScope&) = delete;
  RankFileScope& operator=(const RankFileScope&) = delete;

 private:
  std::string path_;
};

/// Sets the level from logging.level: trace, debug, info, warn, error.
void set_level(const std::string& level);

/// Flushes every sink; call before exiting or aborting.
void flush();

/// Path of this rank's log file within a run's logs directory.
std::string rank_log_path(const std::string& logs_dir, int rank);

}  // namespace nss::log

// Temporary outputs that must not outlive a tool ended by a signal: every
// tool (run_app, comm::run_mpi_app) stopped with Ctrl-C, SIGTERM or SIGHUP
// while it writes removes its unpublished "<out>.tmp.<pid>" files, staging
// directories and the output directories it created, then ends with the
// signal as before. Writers claim them for as long as they are unpublished
// (OutputFile, TokenFileWriter, write_output_file, OutputDirectory,
// consolidate's staging directory). A job's own stop handlers
// (comm/stop_signal.h) replace these once it can stop cleanly instead.
#pragma once

#include <string>

namespace nss {

/// `path` is removed if a terminating signal arrives before release() or
/// destruction; a directory with the files directly inside it (staging
/// directories are flat). At most 64 claims at a time; more are not covered.
class TemporaryClaim {
 public:
  enum class Kind { kFile, kFlatDirectory };
  explicit TemporaryClaim(const std::string& path, Kind kind = Kind::kFile);
  ~TemporaryClaim() { release(); }
  TemporaryClaim(const TemporaryClaim&) = delete;
  TemporaryClaim& operator=(const TemporaryClaim&) = delete;

  /// The path was published or removed: no longer the handler's.
  void release();

 private:
  int slot_ = -1;
};

/// Installs the SIGINT, SIGTERM and SIGHUP handlers that remove the claimed
/// paths (files before directories) and then end the process with the
/// signal's default action. A signal already ignored (nohup) stays ignored.
void remove_temporaries_on_termination();

}  // namespace nss

// One nss_hpc job on this rank, from command line to exit code: communicator,
// configuration (agreed by every rank), run directory, watchdog, then the
// preflight and training.
#pragma once

#include <string>
#include <vector>

#include "core/error.h"

namespace nss::train {

struct JobOptions {
  std::string config_path;
  std::vector<std::string> overrides;  // --set key.path=value
  bool preflight_only = false;
  bool print_config = false;
  std::vector<std::string> command_line;  // for environment.json
};

/// Runs the job; returns the exit code. Throws nss::Error (comm::AgreedError at
/// agreement points, so every rank leaves with the same code).
ExitCode run_job(const JobOptions& options);

}  // namespace nss::train

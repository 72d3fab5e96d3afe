// One nss_hpc job on this rank, from command line to exit code: communicator,
// configuration (agreed by every rank), run directory, watchdog, then the
// preflight and training.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/error.h"

namespace nss::train {

struct JobOptions {
  std::string config_path;
  std::vector<std::string> overrides;  // --set key.path=value
  bool preflight_only = false;
  bool preflight_done = false;  // the caller ran the preflight of this configuration (go)
  bool print_config = false;
  std::vector<std::string> command_line;  // for environment.json
};

/// Instrumentation for test binaries that drive the real job; nss_hpc passes none.
struct JobHooks {
  std::function<void()> before_preflight_verdict;  // rank 0, just before the verdict is sent
};

/// Runs the job; returns the exit code. Throws nss::Error (comm::AgreedError at
/// agreement points, so every rank leaves with the same code).
ExitCode run_job(const JobOptions& options, const JobHooks& hooks = {});

}  // namespace nss::train

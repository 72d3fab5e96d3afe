// The frame of a serial tool's main() (nss_ckpt, nss_consolidate): logging up,
// exceptions mapped to the exit codes of docs/operations.md. No MPI, so the
// tools run on a login node without mpirun.
#pragma once

#include <functional>

#include "core/error.h"

namespace nss::log {

/// Runs `body()`; an nss::Error prints "<program>: error: ..." with its hint and
/// returns its code; out of memory returns 3; anything else returns 1.
int run_tool_app(int argc, char** argv, const std::function<ExitCode()>& body);

}  // namespace nss::log

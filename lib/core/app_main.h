// The frame of a non-MPI tool's main() (nss_prepare_data, nss_consolidate,
// nss_ckpt): exceptions mapped to the exit codes of docs/operations.md and
// printed as one "<tool>: error: ..." message.
#pragma once

#include <functional>
#include <string>

#include "core/error.h"

namespace nss {

/// Runs `body()` and returns its exit code; an exception becomes the exit
/// code `classify` (core/failure.h) gives it, its text printed to stderr. A
/// terminating signal removes the tool's unpublished temporary files first
/// (core/temporary_files.h).
int run_app(const std::string& name, const std::function<ExitCode()>& body);

}  // namespace nss

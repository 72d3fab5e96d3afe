// The frame of an MPI program's main(): MPI up, logging up, exceptions mapped
// to the exit codes of docs/operations.md, MPI down.
#pragma once

#include <functional>

#include "core/error.h"

namespace nss::comm {

/// Runs `body(rank)` with MPI initialised. An AgreedError is printed by rank 0
/// and every rank returns its code; any other error is printed by the rank that
/// hit it and ends the whole job with MPI_Abort(code), so no rank hangs.
int run_mpi_app(int& argc, char**& argv, const std::function<ExitCode(int rank)>& body);

}  // namespace nss::comm

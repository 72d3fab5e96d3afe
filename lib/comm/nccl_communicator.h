// Collectives over NCCL on CUDA device memory. The implementation needs only
// nccl.h and the CUDA runtime, so it is compiled whenever they are found (also
// against a CPU libtorch, so CI keeps it building); builds without them get a
// stub whose factory explains how to get NCCL.
#pragma once

#include <mpi.h>

#include <memory>

#include "comm/communicator.h"

namespace nss::comm {

/// True when this build contains the NCCL backend.
bool nccl_available();

/// NCCL communicator over the ranks of `world` on CUDA device `device`. The
/// unique id travels from rank 0 over MPI. Collectives run on `stream` (a
/// cudaStream_t; nullptr creates a dedicated stream) and return once complete.
/// Buffers are device pointers. Throws UsageError in builds without NCCL.
std::unique_ptr<Communicator> make_nccl_communicator(MPI_Comm world, int device, void* stream);

}  // namespace nss::comm

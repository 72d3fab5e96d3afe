// Collectives over NCCL on CUDA device memory. The implementation needs only
// nccl.h and the CUDA runtime, so it is compiled whenever they are found (also
// against a CPU libtorch, so CI keeps it building); builds without them get a
// stub whose factory explains how to get NCCL.
//
// Streams: every collective runs on the communicator's own stream. An event
// recorded on the caller's compute stream makes it wait for the inputs; an
// event recorded after the collective is polled (with NCCL's asynchronous
// error) until done, and also makes the compute stream wait, so work the
// caller enqueues later is ordered after it even without the host wait.
// The hang watchdog calls Communicator::abort() (ncclCommAbort) before it ends
// the job, so kernels stuck on a dead peer are released.
#pragma once

#include <memory>

#include <mpi.h>

#include "comm/communicator.h"

namespace nss::comm {

/// True when this build contains the NCCL backend.
bool nccl_available();

/// NCCL communicator over the ranks of `world` on CUDA device `device`; the
/// unique id travels from rank 0 over MPI (collective over `world`).
/// `compute_stream` is the cudaStream_t that produces and consumes the
/// buffers (nullptr: the legacy default stream, torch's default). Buffers are
/// device pointers. Throws UsageError in builds without NCCL or when `device`
/// is not a visible CUDA device.
std::unique_ptr<Communicator> make_nccl_communicator(MPI_Comm world, int device,
                                                     void* compute_stream);

}  // namespace nss::comm

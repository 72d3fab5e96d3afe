// Stub for builds without nccl.h / the CUDA runtime: the library still links
// and the MPI backend works; asking for NCCL explains how to get it.
#include "comm/nccl_communicator.h"
#include "core/error.h"

namespace nss::comm {

bool nccl_available() {
  return false;
}

std::unique_ptr<Communicator> make_nccl_communicator(MPI_Comm, int, void*) {
  throw UsageError("comm", "parallel.backend is nccl, but this build has no NCCL support",
                   "rebuild with the CUDA toolkit and NCCL installed (cmake -DNSS_WITH_NCCL=ON), "
                   "or set parallel.backend: mpi");
}

}  // namespace nss::comm

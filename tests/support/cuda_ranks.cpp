#include "support/cuda_ranks.h"

#include <torch/cuda.h>

#include "comm/mpi_communicator.h"
#include "comm/nccl_communicator.h"

namespace nss::testing {

std::optional<CudaRanks> cuda_ranks(std::string& why_not) {
  if (!torch::cuda::is_available()) {
    why_not = "no CUDA device";
    return std::nullopt;
  }
  const auto mpi = comm::MpiCommunicator::create(MPI_COMM_WORLD);
  const auto gpus = static_cast<int>(torch::cuda::device_count());
  if (mpi->local_size() > gpus) {
    why_not = "NCCL needs one GPU per rank: " + std::to_string(gpus) + " visible";
    return std::nullopt;
  }
  CudaRanks ranks;
  ranks.nccl = comm::make_nccl_communicator(MPI_COMM_WORLD, mpi->local_rank(), nullptr);
  ranks.device = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(mpi->local_rank()));
  return ranks;
}

}  // namespace nss::testing

// The GPU side of the training and sharding tests: one CUDA device per rank, NCCL over
// MPI_COMM_WORLD, as the trainer runs on GPUs; or why a test skips here.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <torch/torch.h>

#include "comm/communicator.h"

namespace nss::testing {

struct CudaRanks {
  std::unique_ptr<comm::Communicator> nccl;
  torch::Device device{torch::kCUDA};
};

/// This rank's GPU and the NCCL communicator over all ranks; nullopt with
/// `why_not` set when libtorch sees no device or fewer than the node's ranks.
/// Collective when it returns a value.
std::optional<CudaRanks> cuda_ranks(std::string& why_not);

}  // namespace nss::testing

/// Declares `gpu` (CudaRanks) or skips the test with the reason.
#define NSS_CUDA_RANKS_OR_SKIP(gpu)                             \
  std::string gpu##_why_not;                                    \
  auto gpu##_ranks = ::nss::testing::cuda_ranks(gpu##_why_not); \
  if (!gpu##_ranks) GTEST_SKIP() << gpu##_why_not;              \
  ::nss::testing::CudaRanks& gpu = *gpu##_ranks

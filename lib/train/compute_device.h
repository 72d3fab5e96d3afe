// Where this rank computes: a CUDA device when libtorch sees one and
// parallel.backend is auto or nccl (the device is local rank modulo visible
// devices, comm/device_selection.h), the CPU otherwise. Every rank decides
// the same: either all ranks compute on GPUs or none does.
#pragma once

#include <mpi.h>
#include <torch/types.h>

#include "config/config.h"
#include "fsdp/sharded_unit.h"

namespace nss::train {

struct ComputeDevice {
  torch::Device device{torch::kCPU};
  int ranks_on_device = 1;  // local ranks sharing this GPU (parallel.share_devices)
};

/// Collective over `world`. UsageError when parallel.backend is nccl and no
/// rank sees a CUDA device, when some ranks see CUDA devices and others do
/// not, or when ranks would share a GPU without parallel.share_devices.
ComputeDevice choose_compute_device(const config::ParallelConfig& parallel, MPI_Comm world);

/// How the units shard and compute on `device`, for the job and the
/// preflight's synthetic step alike: training.dtype with auto resolved (bf16
/// on CUDA, fp32 on CPU); training.activation_checkpointing and
/// parallel.reshard_after_forward (auto resolved); prefetch on CUDA only
/// (NCCL overlaps a gather with compute, a host backend would only hold the
/// memory longer).
fsdp::ShardOptions shard_options(const config::Config& config, const torch::Device& device);

}  // namespace nss::train

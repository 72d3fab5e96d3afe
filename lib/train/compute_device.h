// Where this rank computes: a CUDA device when libtorch sees one and
// parallel.backend is auto or nccl (the device is local rank modulo visible
// devices, comm/device_selection.h), the CPU otherwise. Every rank decides
// the same: either all ranks compute on GPUs or none does.
#pragma once

#include <mpi.h>
#include <torch/types.h>

#include "config/config.h"
#include "core/device_kind.h"
#include "fsdp/sharded_unit.h"
#include "plan/run_plan.h"

namespace nss::train {

struct ComputeDevice {
  torch::Device device{torch::kCPU};
  int ranks_on_device = 1;  // local ranks sharing this GPU (parallel.share_devices)
};

/// Collective over `world`. UsageError when parallel.backend is nccl and no
/// rank sees a CUDA device, when some ranks see CUDA devices and others do
/// not, or when ranks would share a GPU without parallel.share_devices.
ComputeDevice choose_compute_device(const config::ParallelConfig& parallel, MPI_Comm world);

/// The kind of `device`, for the run plan.
DeviceKind device_kind(const torch::Device& device);

/// How the units shard and compute on `device` as `plan` says: its compute
/// dtype, recompute, resharding, prefetch and offload.
fsdp::ShardOptions shard_options(const plan::RunPlan& plan, const torch::Device& device);

}  // namespace nss::train

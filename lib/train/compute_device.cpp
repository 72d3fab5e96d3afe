#include "train/compute_device.h"

#include <torch/cuda.h>

#include "comm/device_selection.h"
#include "comm/mpi_check.h"
#include "core/error.h"
#include "preflight/gpu_inventory.h"

namespace nss::train {

ComputeDevice choose_compute_device(const config::ParallelConfig& parallel, MPI_Comm world) {
  const bool wanted = parallel.backend != config::Backend::kMpi;
  const int visible =
      wanted && torch::cuda::is_available() ? static_cast<int>(torch::cuda::device_count()) : 0;
  int any_gpu = visible > 0 ? 1 : 0;
  NSS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &any_gpu, 1, MPI_INT, MPI_MAX, world));
  if (!any_gpu) {
    if (parallel.backend == config::Backend::kNccl)
      throw UsageError("train",
                       "parallel.backend is nccl, but no rank sees a CUDA device through libtorch",
                       "run the GPU build (docs/gpu.md) on GPU nodes, check nvidia-smi and "
                       "CUDA_VISIBLE_DEVICES, or set parallel.backend: mpi (CPU)");
    // On the CPU the "device" is host memory: offloading would only add copies.
    if (parallel.offload_optimizer)
      throw UsageError("train",
                       "parallel.offload_optimizer is true, but this run computes on the CPU, "
                       "where the optimizer state is in host memory already",
                       "set parallel.offload_optimizer: false, or run the GPU build (docs/gpu.md) "
                       "on GPU nodes");
    return {};
  }
  // A rank without devices takes part in the exchange and throws after it.
  const auto pci_bus_id = [](int ordinal) {
    const preflight::GpuInventory inventory = preflight::query_gpus(-1);
    for (const auto& device : inventory.devices)
      if (device.index == ordinal) return device.pci_bus_id;
    return std::string("cuda:") + std::to_string(ordinal);
  };
  const comm::DeviceAssignment assignment =
      comm::assign_device(world, visible, pci_bus_id, parallel.share_devices);
  return {torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(assignment.device)),
          assignment.ranks_on_device};
}

DeviceKind device_kind(const torch::Device& device) {
  return device.is_cuda() ? DeviceKind::kCuda : DeviceKind::kCpu;
}

fsdp::ShardOptions shard_options(const plan::RunPlan& plan, const torch::Device& device) {
  fsdp::ShardOptions options;
  options.compute_dtype =
      plan.element_type() == DType::kBFloat16 ? torch::kBFloat16 : torch::kFloat32;
  options.device = device;
  options.recompute = plan.recompute;
  options.reshard_after_forward = plan.reshard_after_forward;
  options.prefetch = plan.prefetch;
  options.offload_optimizer = plan.offload_optimizer;
  return options;
}

}  // namespace nss::train

// The GPUs this process can see, through the CUDA runtime when the build found
// the CUDA toolkit (gpu_inventory_cuda.cpp) and a stub that reports none
// otherwise (no_cuda_gpu_inventory.cpp), so CPU builds link and run the same code.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nss::preflight {

struct GpuDevice {
  int index = 0;  // CUDA ordinal, after CUDA_VISIBLE_DEVICES
  std::string name;
  std::string pci_bus_id;  // physical identity: ranks that see different ordinals may share it
  int compute_major = 0;
  int compute_minor = 0;
  std::uint64_t total_bytes = 0;
  std::optional<std::uint64_t> free_bytes;  // measured only on the device this rank will use
};

struct GpuInventory {
  std::vector<GpuDevice> devices;
  std::string problem;  // why none are listed (no CUDA runtime in this build, no driver, ...)
};

/// True when this build was compiled against the CUDA runtime.
bool gpu_runtime_available();

/// The visible GPUs. With `free_memory_of` >= 0 that device's free memory is
/// measured too (cudaMemGetInfo creates a CUDA context there, so only on the
/// device this rank will use); -1 measures none.
GpuInventory query_gpus(int free_memory_of);

}  // namespace nss::preflight

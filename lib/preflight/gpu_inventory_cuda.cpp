// GPU inventory through the CUDA runtime. Properties need no CUDA context;
// only the free-memory query creates one, on the device this rank will use.
#include <cstdio>
#include <string>

#include <cuda_runtime_api.h>

#include "preflight/gpu_inventory.h"

namespace nss::preflight {
namespace {

std::string describe(const char* call, cudaError_t rc) {
  return std::string(call) + " failed: " + cudaGetErrorString(rc);
}

}  // namespace

bool gpu_runtime_available() {
  return true;
}

GpuInventory query_gpus(int free_memory_of) {
  GpuInventory inventory;
  int count = 0;
  const cudaError_t counted = cudaGetDeviceCount(&count);
  if (counted != cudaSuccess) {
    // No driver or no device; the error is cleared so later CUDA users start clean.
    inventory.problem = describe("cudaGetDeviceCount", counted);
    cudaGetLastError();
    return inventory;
  }
  for (int index = 0; index < count; ++index) {
    cudaDeviceProp properties;
    const cudaError_t rc = cudaGetDeviceProperties(&properties, index);
    if (rc != cudaSuccess) {
      inventory.problem = describe("cudaGetDeviceProperties", rc);
      cudaGetLastError();
      continue;
    }
    GpuDevice device;
    device.index = index;
    device.name = properties.name;
    char bus_id[32];
    std::snprintf(
        bus_id, sizeof bus_id, "%04x:%02x:%02x.0", static_cast<unsigned>(properties.pciDomainID),
        static_cast<unsigned>(properties.pciBusID), static_cast<unsigned>(properties.pciDeviceID));
    device.pci_bus_id = bus_id;
    device.compute_major = properties.major;
    device.compute_minor = properties.minor;
    device.total_bytes = properties.totalGlobalMem;
    if (index == free_memory_of) {
      int previous = 0;
      cudaGetDevice(&previous);
      std::size_t free_bytes = 0, total_bytes = 0;
      const cudaError_t set = cudaSetDevice(index);
      const cudaError_t info = set == cudaSuccess ? cudaMemGetInfo(&free_bytes, &total_bytes) : set;
      if (info == cudaSuccess) {
        device.free_bytes = free_bytes;
      } else {
        inventory.problem = describe("cudaMemGetInfo", info);
        cudaGetLastError();
      }
      cudaSetDevice(previous);
    }
    inventory.devices.push_back(device);
  }
  return inventory;
}

}  // namespace nss::preflight

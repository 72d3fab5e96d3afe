// Stub for builds without the CUDA toolkit: no GPU is visible, and the reason
// says how to get a build that sees them.
#include "preflight/gpu_inventory.h"

namespace nss::preflight {

bool gpu_runtime_available() {
  return false;
}

GpuInventory query_gpus(int) {
  GpuInventory inventory;
  inventory.problem =
      "this build has no CUDA runtime (CMake did not find the CUDA toolkit; rebuild with it to "
      "use GPUs)";
  return inventory;
}

}  // namespace nss::preflight

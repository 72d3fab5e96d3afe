#include "generate/generation_device.h"

#include <torch/cuda.h>

#include "comm/device_selection.h"
#include "comm/mpi_check.h"
#include "config/derived.h"
#include "core/error.h"

namespace nss::generate {

torch::TensorOptions generation_options(config::ComputeDtype dtype, MPI_Comm world) {
  const int visible =
      torch::cuda::is_available() ? static_cast<int>(torch::cuda::device_count()) : 0;
  int any_gpu = visible > 0 ? 1 : 0;
  NSS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &any_gpu, 1, MPI_INT, MPI_MAX, world));
  torch::Device device(torch::kCPU);
  if (any_gpu) {
    const auto assignment = comm::assign_device(
        world, visible, [](int ordinal) { return "cuda:" + std::to_string(ordinal); },
        /*share_devices=*/true);
    device = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(assignment.device));
  }
  const config::ComputeDtype resolved =
      config::resolved_dtype(dtype, device.is_cuda() ? DeviceKind::kCuda : DeviceKind::kCpu);
  return torch::TensorOptions().device(device).dtype(
      resolved == config::ComputeDtype::kBf16 ? torch::kBFloat16 : torch::kFloat32);
}

}  // namespace nss::generate

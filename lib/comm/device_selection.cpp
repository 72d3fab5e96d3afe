#include "comm/device_selection.h"

#include <algorithm>
#include <cstring>

#include "comm/mpi_check.h"
#include "core/error.h"

namespace nss::comm {
namespace {

// Fixed-width identities keep the node-local exchange one MPI_Allgather.
constexpr int kIdBytes = 64;

[[noreturn]] void no_visible_device() {
  throw UsageError("comm", "this rank sees no CUDA device",
                   "request GPUs for the job (e.g. Slurm --gpus-per-node), check "
                   "CUDA_VISIBLE_DEVICES and nvidia-smi, or run on CPU");
}

}  // namespace

int device_for_local_rank(int local_rank, int visible_devices) {
  NSS_ASSERT(local_rank >= 0, "comm", "negative local rank");
  if (visible_devices <= 0) no_visible_device();
  return local_rank % visible_devices;
}

int ranks_sharing_device(const std::vector<std::string>& device_ids, int local_rank,
                         bool share_devices) {
  NSS_ASSERT(local_rank >= 0 && local_rank < static_cast<int>(device_ids.size()), "comm",
             "local rank outside the node's device list");
  const std::string& mine = device_ids[static_cast<std::size_t>(local_rank)];
  const int sharing = static_cast<int>(std::count(device_ids.begin(), device_ids.end(), mine));
  if (sharing > 1 && !share_devices)
    throw UsageError("comm",
                     std::to_string(device_ids.size()) + " ranks on this node and " +
                         std::to_string(sharing) + " of them would share CUDA device " + mine,
                     "start one rank per GPU (mpirun -n <GPUs per node> per node; Slurm "
                     "--ntasks-per-node equal to --gpus-per-node), or set "
                     "parallel.share_devices: true to let ranks share devices round-robin "
                     "(each then gets a fraction of the device's memory)");
  return sharing;
}

DeviceAssignment assign_device(MPI_Comm world, int visible_devices,
                               const std::function<std::string(int)>& physical_id,
                               bool share_devices) {
  int rank = 0;
  NSS_MPI_CHECK(MPI_Comm_rank(world, &rank));
  MPI_Comm local = MPI_COMM_NULL;
  NSS_MPI_CHECK(MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local));
  int local_rank = 0, local_size = 1;
  MPI_Comm_rank(local, &local_rank);
  MPI_Comm_size(local, &local_size);

  // A rank without devices still takes part in the exchange (empty identity),
  // so its node-mates do not wait for it; it throws afterwards.
  DeviceAssignment assignment;
  char id[kIdBytes] = {};
  if (visible_devices > 0) {
    assignment.device = device_for_local_rank(local_rank, visible_devices);
    std::strncpy(id, physical_id(assignment.device).c_str(), kIdBytes - 1);
  }
  std::vector<char> ids(static_cast<std::size_t>(local_size) * kIdBytes);
  const int gathered = MPI_Allgather(id, kIdBytes, MPI_CHAR, ids.data(), kIdBytes, MPI_CHAR, local);
  MPI_Comm_free(&local);
  NSS_MPI_CHECK(gathered);

  if (visible_devices <= 0) no_visible_device();
  std::vector<std::string> device_ids;
  for (int r = 0; r < local_size; ++r)
    device_ids.emplace_back(&ids[static_cast<std::size_t>(r) * kIdBytes]);
  assignment.ranks_on_device = ranks_sharing_device(device_ids, local_rank, share_devices);
  return assignment;
}

}  // namespace nss::comm

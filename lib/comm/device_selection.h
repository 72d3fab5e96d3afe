// Which CUDA device a rank uses: its node-local rank (MPI_Comm_split_type)
// modulo the devices it can see. "One rank per GPU" then needs no per-rank
// CUDA_VISIBLE_DEVICES, and a launcher that hands each rank its own single
// device (Slurm --gpus-per-task=1) makes every rank use its device 0. Whether
// ranks really share a GPU is decided from the physical identity (PCI bus id)
// of the device each local rank picked, not from ordinals.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <mpi.h>

namespace nss::comm {

struct DeviceAssignment {
  int device = 0;           // CUDA ordinal, after CUDA_VISIBLE_DEVICES
  int ranks_on_device = 1;  // local ranks on this physical device (itself included)
};

/// The ordinal node-local rank `local_rank` uses among `visible_devices`
/// (UsageError when there is none).
int device_for_local_rank(int local_rank, int visible_devices);

/// How many local ranks use the same physical device as `local_rank`, given
/// every local rank's device identity in local-rank order. More than one is a
/// UsageError unless `share_devices` (parallel.share_devices) allows it.
int ranks_sharing_device(const std::vector<std::string>& device_ids, int local_rank,
                         bool share_devices);

/// Collective over `world`: picks this rank's device, exchanges the identity
/// `physical_id(ordinal)` returns with the other ranks of the node, and
/// applies ranks_sharing_device(). Every rank of a node throws the same error.
DeviceAssignment assign_device(MPI_Comm world, int visible_devices,
                               const std::function<std::string(int)>& physical_id,
                               bool share_devices);

}  // namespace nss::comm

// Who talks to whom in a training job, owned in one place (torchtitan's
// ParallelDims is the model): the world over MPI_COMM_WORLD and its
// watchdog; hybrid sharding's shard and replica groups, split from the world
// and watched like it; on GPUs their NCCL communicators with a watchdog of
// their own (host-side collectives stay on MPI); the asynchronous checkpoint
// writer's own communicator; with tensor parallelism the tensor groups
// (consecutive ranks of one node) and, when they exceed the model's
// key/value heads, the ranks that share one. run_job builds it in the job's
// phases; the trainer borrows the communicators it hands out.
#pragma once

#include <memory>
#include <optional>

#include "comm/mpi_communicator.h"
#include "comm/shard_groups.h"
#include "comm/watchdog.h"
#include "config/config.h"
#include "fsdp/sharded_unit.h"
#include "train/compute_device.h"
#include "train/sharded_llama.h"
#include "train/training_step.h"

namespace nss::train {

class TrainingTopology {
 public:
  /// The world (collective over MPI_COMM_WORLD).
  TrainingTopology();
  TrainingTopology(const TrainingTopology&) = delete;
  TrainingTopology& operator=(const TrainingTopology&) = delete;

  comm::MpiCommunicator& world() { return *world_; }

  /// Watches the world's collectives from now on (parallel.collective_timeout_s).
  void watch_world(const config::Config& config);

  /// The groups and device communicators the units need, once the device is
  /// chosen, and the checkpoint writer's (collective; a failure on any rank
  /// fails all of them).
  void connect_units(const config::Config& config, const ComputeDevice& device);

  /// The FSDP units' collectives: the shard group's communicator (NCCL on a
  /// GPU) and, under hybrid sharding, the replica group's; else the world.
  fsdp::ShardComms unit_comms();
  /// The step's host-side reductions: the world, and under hybrid sharding
  /// the shard group on the host (MPI) for the squared gradient norm (with
  /// tensor parallelism the ranks of one replica).
  StepComms step_comms();
  /// The model's tensor-parallel groups (NCCL on a GPU); empty at
  /// parallel.tensor_parallel_size 1.
  TensorComms tensor_comms();
  /// The asynchronous checkpoint writer's own communicator over the same
  /// ranks (checkpoint.async; else nullptr), so its collectives never
  /// interleave with training's. Its new owner takes it.
  std::unique_ptr<comm::Communicator> take_checkpoint_writer_comm();

 private:
  void open_nccl(const config::Config& config, const ComputeDevice& device);
  void connect_tensor_groups(const config::Config& config);

  std::unique_ptr<comm::MpiCommunicator> world_;
  std::optional<comm::Watchdog> world_watchdog_;
  comm::MpiShardGroups groups_;
  std::unique_ptr<comm::MpiCommunicator> key_value_;  // T above the key/value heads
  std::optional<comm::Watchdog> groups_watchdog_;
  std::unique_ptr<comm::Communicator> nccl_shard_, nccl_replicate_;
  std::unique_ptr<comm::Communicator> nccl_tensor_, nccl_key_value_;
  std::optional<comm::Watchdog> nccl_watchdog_;
  std::unique_ptr<comm::Communicator> checkpoint_writer_;
};

}  // namespace nss::train

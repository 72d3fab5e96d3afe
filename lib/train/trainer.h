// The training loop of one rank: sharded model, optimizer state, dataloader,
// then for each step the micro-batches, the optimizer update, metrics,
// validation, checkpoints and the stop-signal agreement.
#pragma once

#include <memory>
#include <string>

#include <torch/types.h>

#include "comm/communicator.h"
#include "config/config.h"
#include "core/error.h"

namespace nss::train {

struct TrainerContext {
  std::string run_dir;
  std::string run_id;                 // train/run_identity.h, recorded in every step
  int threads = 1;                    // intra-op threads of this rank
  torch::Device device{torch::kCPU};  // where the model computes (train/compute_device.h)
  /// The FSDP units' collectives: the shard group's communicator and, under
  /// hybrid sharding, the replica group's (NCCL on a CUDA device); nullptr:
  /// the `comm` given to train(), which always carries the host-side
  /// collectives, and no replicas.
  comm::Communicator* shard_comm = nullptr;
  comm::Communicator* replicate_comm = nullptr;
  /// Under hybrid sharding the shard group on the host (MPI), for the squared
  /// gradient norm (train::StepComms); nullptr: `comm`.
  comm::Communicator* host_shard_comm = nullptr;
  /// The asynchronous checkpoint writer's own communicator over the same ranks
  /// (checkpoint.async), so its collectives never interleave with training's.
  std::unique_ptr<comm::Communicator> checkpoint_writer_comm;
};

/// Trains until training.max_steps or a stop signal; returns the exit code
/// (0, or 7/75 after a stop signal).
ExitCode train(const config::Config& config, comm::Communicator& comm, TrainerContext context);

}  // namespace nss::train

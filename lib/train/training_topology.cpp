#include "train/training_topology.h"

#include <vector>

#include <spdlog/spdlog.h>

#include "comm/agreement.h"
#include "comm/nccl_communicator.h"

namespace nss::train {

TrainingTopology::TrainingTopology() : world_(comm::MpiCommunicator::create(MPI_COMM_WORLD)) {}

void TrainingTopology::watch_world(const config::Config& config) {
  world_watchdog_.emplace(*world_, MPI_COMM_WORLD, config.parallel.collective_timeout_s);
}

void TrainingTopology::connect_units(const config::Config& config, const ComputeDevice& device) {
  const comm::ShardGroupShape shape =
      comm::shard_group_shape(world_->size(), static_cast<int>(config.parallel.shard_group_size));
  if (shape.replicas() > 1) {
    groups_ = comm::split_shard_groups(MPI_COMM_WORLD, shape);
    groups_watchdog_.emplace(
        std::vector<comm::Communicator*>{groups_.shard.get(), groups_.replicate.get()},
        MPI_COMM_WORLD, config.parallel.collective_timeout_s);
    spdlog::info("nss_hpc: hybrid sharding: {}, {}", groups_.shard->group(),
                 groups_.replicate->group());
  }
  if (device.device.is_cuda()) open_nccl(config, device);
  if (config.checkpoint.async) checkpoint_writer_ = comm::MpiCommunicator::create(MPI_COMM_WORLD);
}

void TrainingTopology::open_nccl(const config::Config& config, const ComputeDevice& device) {
  comm::run_on_all(*world_, [&] {
    const auto over = [&](const comm::MpiCommunicator* group) {
      auto nccl = comm::make_nccl_communicator(group ? group->handle() : MPI_COMM_WORLD,
                                               device.device.index(), nullptr);
      if (group) nccl->set_group(group->group());
      return nccl;
    };
    nccl_shard_ = over(groups_.shard.get());
    if (groups_.replicate) nccl_replicate_ = over(groups_.replicate.get());
  });
  std::vector<comm::Communicator*> watched{nccl_shard_.get()};
  if (nccl_replicate_) watched.push_back(nccl_replicate_.get());
  nccl_watchdog_.emplace(watched, MPI_COMM_WORLD, config.parallel.collective_timeout_s);
}

fsdp::ShardComms TrainingTopology::unit_comms() {
  if (nccl_shard_) return {*nccl_shard_, nccl_replicate_.get(), *world_};
  if (groups_.shard) return {*groups_.shard, groups_.replicate.get(), *world_};
  return {*world_};
}

StepComms TrainingTopology::step_comms() {
  if (groups_.shard) return {*world_, *groups_.shard};
  return {*world_};
}

std::unique_ptr<comm::Communicator> TrainingTopology::take_checkpoint_writer_comm() {
  return std::move(checkpoint_writer_);
}

}  // namespace nss::train

#include "train/training_topology.h"

#include <vector>

#include <spdlog/spdlog.h>

#include "comm/agreement.h"
#include "comm/mpi_check.h"
#include "comm/nccl_communicator.h"
#include "core/error.h"
#include "model/unit_layouts.h"

namespace nss::train {

TrainingTopology::TrainingTopology() : world_(comm::MpiCommunicator::create(MPI_COMM_WORLD)) {}

void TrainingTopology::watch_world(const config::Config& config) {
  world_watchdog_.emplace(*world_, MPI_COMM_WORLD, config.parallel.collective_timeout_s);
}

void TrainingTopology::connect_units(const config::Config& config, const ComputeDevice& device) {
  const int tensor = static_cast<int>(config.parallel.tensor_parallel_size);
  const comm::ShardGroupShape shape = comm::shard_group_shape(
      world_->size(), static_cast<int>(config.parallel.shard_group_size), tensor);
  if (shape.replicas() > 1 || tensor > 1) {
    groups_ = comm::split_shard_groups(MPI_COMM_WORLD, shape);
    std::vector<comm::Communicator*> watched{groups_.shard.get(), groups_.replicate.get()};
    if (tensor > 1) {
      connect_tensor_groups(config);
      watched.push_back(groups_.tensor.get());
      watched.push_back(groups_.replica.get());
      if (key_value_) watched.push_back(key_value_.get());
      spdlog::info("nss_hpc: tensor parallelism: {}{}", groups_.tensor->group(),
                   config.parallel.sequence_parallel ? ", sequence parallel" : "");
    }
    groups_watchdog_.emplace(watched, MPI_COMM_WORLD, config.parallel.collective_timeout_s);
    if (shape.replicas() > 1)
      spdlog::info("nss_hpc: hybrid sharding: {}, {}", groups_.shard->group(),
                   groups_.replicate->group());
  }
  if (device.device.is_cuda()) open_nccl(config, device);
  if (config.checkpoint.async) checkpoint_writer_ = comm::MpiCommunicator::create(MPI_COMM_WORLD);
}

// A tensor group's collectives run every layer: they must stay inside a
// node. The key/value groups are split from it.
void TrainingTopology::connect_tensor_groups(const config::Config& config) {
  comm::run_on_all(*world_, [&] {
    MPI_Comm node;
    NSS_MPI_CHECK(MPI_Comm_split_type(groups_.tensor->handle(), MPI_COMM_TYPE_SHARED, 0,
                                      MPI_INFO_NULL, &node));
    int on_this_node = 0;
    NSS_MPI_CHECK(MPI_Comm_size(node, &on_this_node));
    NSS_MPI_CHECK(MPI_Comm_free(&node));
    if (on_this_node != groups_.tensor->size())
      throw UsageError(
          "train",
          "parallel.tensor_parallel_size=" + std::to_string(config.parallel.tensor_parallel_size) +
              ": " + groups_.tensor->group() + " spans more than one node",
          "use a tensor_parallel_size that divides the ranks per node (" +
              std::to_string(world_->local_size()) +
              " here), with consecutive ranks on each node (mpirun --map-by "
              "slot, srun's block distribution)");
  });
  key_value_ = comm::split_key_value_groups(
      *groups_.tensor, static_cast<int>(model::tensor_parallel_plan(config).kv_replicas));
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
    if (groups_.tensor) nccl_tensor_ = over(groups_.tensor.get());
    if (key_value_) nccl_key_value_ = over(key_value_.get());
  });
  std::vector<comm::Communicator*> watched{nccl_shard_.get()};
  for (comm::Communicator* c : {nccl_replicate_.get(), nccl_tensor_.get(), nccl_key_value_.get()})
    if (c) watched.push_back(c);
  nccl_watchdog_.emplace(watched, MPI_COMM_WORLD, config.parallel.collective_timeout_s);
}

fsdp::ShardComms TrainingTopology::unit_comms() {
  if (nccl_shard_) return {*nccl_shard_, nccl_replicate_.get(), *world_};
  if (groups_.shard) return {*groups_.shard, groups_.replicate.get(), *world_};
  return {*world_};
}

StepComms TrainingTopology::step_comms() {
  if (groups_.tensor) return {*world_, *groups_.replica, groups_.tensor->size()};
  if (groups_.shard) return {*world_, *groups_.shard};
  return {*world_};
}

TensorComms TrainingTopology::tensor_comms() {
  if (nccl_tensor_) return {nccl_tensor_.get(), nccl_key_value_.get()};
  return {groups_.tensor.get(), key_value_.get()};
}

std::unique_ptr<comm::Communicator> TrainingTopology::take_checkpoint_writer_comm() {
  return std::move(checkpoint_writer_);
}

}  // namespace nss::train

// Hybrid sharding's partition of the N ranks (HSDP; torchtitan's
// dp_replicate x dp_shard), with tensor parallelism's groups inside it: the
// ranks laid out as (replica x shard x tensor), the tensor rank fastest. The
// T ranks of a tensor group are consecutive (a node holds whole tensor
// groups); a shard group is the G ranks of one replica with the same tensor
// rank, holding that tensor-parallel shard of the model sharded G ways; R = N
// / (G T) replicas of it. Rank r sits at tensor rank r % T, shard rank (r /
// T) % G and replica r / (G T); its replica group is the R ranks with its
// shard and tensor rank. With T = 1 a shard group is G consecutive ranks and
// G = N (shard_group_size 0) is full sharding: one shard group and replica
// groups of one rank.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <mpi.h>

#include "comm/mpi_communicator.h"

namespace nss::comm {

struct ShardGroupShape {
  int world_size = 1;
  int group_size = 1;   // G: divides world_size / tensor_size
  int tensor_size = 1;  // T: divides world_size

  int replicas() const { return world_size / (group_size * tensor_size); }
  int replica(int rank) const { return rank / (group_size * tensor_size); }
  int tensor_rank(int rank) const { return rank % tensor_size; }
  int tensor_group(int rank) const { return rank / tensor_size; }
  /// The shard groups are numbered replica by replica, tensor rank fastest.
  int shard_group(int rank) const { return replica(rank) * tensor_size + tensor_rank(rank); }
  int shard_rank(int rank) const { return rank / tensor_size % group_size; }
  /// The world ranks of rank `rank`'s shard group, replica group and tensor group.
  std::vector<int> shard_group_ranks(int rank) const;
  std::vector<int> replica_group_ranks(int rank) const;
  std::vector<int> tensor_group_ranks(int rank) const;
  /// What the hang watchdog calls them: "shard group 1 (ranks 4-7)",
  /// "replica group of shard rank 2 (ranks 2,6)", "tensor group 3 (ranks 6,7)"
  /// (with T > 1 the shard and replica groups name their tensor rank too).
  std::string shard_group_name(int rank) const;
  std::string replica_group_name(int rank) const;
  std::string tensor_group_name(int rank) const;
  std::string replica_name(int rank) const;  // "replica 1 (ranks 4-7)"
};

/// The shape for `world_size` ranks, parallel.shard_group_size `group_size`
/// (0: all the ranks of a tensor rank) and `tensor_size` tensor ranks.
/// InternalError unless they divide the world (the configuration's layout
/// check reports that to users first).
ShardGroupShape shard_group_shape(int world_size, int group_size, int tensor_size = 1);

/// This rank's groups over MPI on host memory (collective over `world`).
/// Each is named for the watchdog (Communicator::group()).
struct MpiShardGroups {
  std::unique_ptr<MpiCommunicator> shard;
  std::unique_ptr<MpiCommunicator> replicate;
  std::unique_ptr<MpiCommunicator> tensor;  // null when T = 1
  /// The G T ranks of this rank's replica, whose shards hold the model once
  /// (null when T = 1: the shard group does).
  std::unique_ptr<MpiCommunicator> replica;
};
MpiShardGroups split_shard_groups(MPI_Comm world, const ShardGroupShape& shape);

/// The ranks of `tensor` that compute with the same key/value head when the
/// tensor size exceeds the model's key/value heads: `replicas` consecutive
/// tensor ranks (collective over `tensor`; nullptr when `replicas` is 1).
std::unique_ptr<MpiCommunicator> split_key_value_groups(const MpiCommunicator& tensor,
                                                        int replicas);

}  // namespace nss::comm

// Hybrid sharding's partition of the N ranks (HSDP; torchtitan's
// dp_replicate x dp_shard): shard groups of G consecutive ranks, each holding
// the whole model sharded G ways, and R = N / G replicas of it. Rank r sits
// in shard group r / G at shard rank r % G; its replica group is the R ranks
// with the same shard rank, one per shard group. G = N (shard_group_size 0)
// is full sharding: one shard group and replica groups of one rank.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <mpi.h>

#include "comm/mpi_communicator.h"

namespace nss::comm {

struct ShardGroupShape {
  int world_size = 1;
  int group_size = 1;  // G: divides world_size

  int replicas() const { return world_size / group_size; }
  int shard_group(int rank) const { return rank / group_size; }
  int shard_rank(int rank) const { return rank % group_size; }
  /// The world ranks of rank `rank`'s shard group and of its replica group.
  std::vector<int> shard_group_ranks(int rank) const;
  std::vector<int> replica_group_ranks(int rank) const;
  /// What the hang watchdog calls them: "shard group 1 (ranks 4-7)",
  /// "replica group of shard rank 2 (ranks 2,6)".
  std::string shard_group_name(int rank) const;
  std::string replica_group_name(int rank) const;
};

/// The shape for `world_size` ranks and parallel.shard_group_size `group_size`
/// (0: all ranks). InternalError unless it divides the world (the
/// configuration's layout check reports that to users first).
ShardGroupShape shard_group_shape(int world_size, int group_size);

/// This rank's two groups over MPI on host memory (collective over `world`).
/// Each is named for the watchdog (Communicator::group()).
struct MpiShardGroups {
  std::unique_ptr<MpiCommunicator> shard;
  std::unique_ptr<MpiCommunicator> replicate;
};
MpiShardGroups split_shard_groups(MPI_Comm world, const ShardGroupShape& shape);

}  // namespace nss::comm

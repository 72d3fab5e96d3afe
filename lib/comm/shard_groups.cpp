#include "comm/shard_groups.h"

#include "comm/hang_diagnosis.h"
#include "comm/mpi_check.h"
#include "core/error.h"

namespace nss::comm {

std::vector<int> ShardGroupShape::shard_group_ranks(int rank) const {
  std::vector<int> ranks;
  const int first = shard_group(rank) * group_size;
  for (int r = first; r < first + group_size; ++r) ranks.push_back(r);
  return ranks;
}

std::vector<int> ShardGroupShape::replica_group_ranks(int rank) const {
  std::vector<int> ranks;
  for (int r = shard_rank(rank); r < world_size; r += group_size) ranks.push_back(r);
  return ranks;
}

std::string ShardGroupShape::shard_group_name(int rank) const {
  return "shard group " + std::to_string(shard_group(rank)) + " (ranks " +
         format_rank_list(shard_group_ranks(rank)) + ")";
}

std::string ShardGroupShape::replica_group_name(int rank) const {
  return "replica group of shard rank " + std::to_string(shard_rank(rank)) + " (ranks " +
         format_rank_list(replica_group_ranks(rank)) + ")";
}

ShardGroupShape shard_group_shape(int world_size, int group_size) {
  const int g = group_size == 0 ? world_size : group_size;
  if (world_size < 1 || g < 1 || g > world_size || world_size % g != 0)
    throw InternalError("comm", "shard group size " + std::to_string(group_size) +
                                    " does not divide " + std::to_string(world_size) + " ranks");
  return {world_size, g};
}

namespace {

std::unique_ptr<MpiCommunicator> split(MPI_Comm world, int color, int key, std::string name) {
  MPI_Comm part;
  NSS_MPI_CHECK(MPI_Comm_split(world, color, key, &part));
  auto comm = MpiCommunicator::create(part);  // duplicates it
  NSS_MPI_CHECK(MPI_Comm_free(&part));
  comm->set_group(std::move(name));
  return comm;
}

}  // namespace

MpiShardGroups split_shard_groups(MPI_Comm world, const ShardGroupShape& shape) {
  int rank = 0, size = 0;
  NSS_MPI_CHECK(MPI_Comm_rank(world, &rank));
  NSS_MPI_CHECK(MPI_Comm_size(world, &size));
  NSS_ASSERT(size == shape.world_size, "comm", "shard groups planned for another world size");
  MpiShardGroups groups;
  groups.shard = split(world, shape.shard_group(rank), rank, shape.shard_group_name(rank));
  groups.replicate = split(world, shape.shard_rank(rank), rank, shape.replica_group_name(rank));
  return groups;
}

}  // namespace nss::comm

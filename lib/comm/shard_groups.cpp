#include "comm/shard_groups.h"

#include "comm/hang_diagnosis.h"
#include "comm/mpi_check.h"
#include "core/error.h"

namespace nss::comm {

std::vector<int> ShardGroupShape::shard_group_ranks(int rank) const {
  std::vector<int> ranks;
  const int first = replica(rank) * group_size * tensor_size + tensor_rank(rank);
  for (int s = 0; s < group_size; ++s) ranks.push_back(first + s * tensor_size);
  return ranks;
}

std::vector<int> ShardGroupShape::replica_group_ranks(int rank) const {
  std::vector<int> ranks;
  const int first = shard_rank(rank) * tensor_size + tensor_rank(rank);
  for (int r = first; r < world_size; r += group_size * tensor_size) ranks.push_back(r);
  return ranks;
}

std::vector<int> ShardGroupShape::tensor_group_ranks(int rank) const {
  std::vector<int> ranks;
  const int first = tensor_group(rank) * tensor_size;
  for (int r = first; r < first + tensor_size; ++r) ranks.push_back(r);
  return ranks;
}

std::string ShardGroupShape::shard_group_name(int rank) const {
  const std::string of_tensor_rank =
      tensor_size > 1 ? " of tensor rank " + std::to_string(tensor_rank(rank)) : "";
  return "shard group " + std::to_string(shard_group(rank)) + of_tensor_rank + " (ranks " +
         format_rank_list(shard_group_ranks(rank)) + ")";
}

std::string ShardGroupShape::replica_group_name(int rank) const {
  const std::string and_tensor_rank =
      tensor_size > 1 ? ", tensor rank " + std::to_string(tensor_rank(rank)) : "";
  return "replica group of shard rank " + std::to_string(shard_rank(rank)) + and_tensor_rank +
         " (ranks " + format_rank_list(replica_group_ranks(rank)) + ")";
}

std::string ShardGroupShape::tensor_group_name(int rank) const {
  return "tensor group " + std::to_string(tensor_group(rank)) + " (ranks " +
         format_rank_list(tensor_group_ranks(rank)) + ")";
}

std::string ShardGroupShape::replica_name(int rank) const {
  const int first = replica(rank) * group_size * tensor_size;
  return "replica " + std::to_string(replica(rank)) + " (ranks " + std::to_string(first) + "-" +
         std::to_string(first + group_size * tensor_size - 1) + ")";
}

ShardGroupShape shard_group_shape(int world_size, int group_size, int tensor_size) {
  const int t = tensor_size;
  const bool tensor_divides = world_size >= 1 && t >= 1 && world_size % t == 0;
  const int g = group_size == 0 && tensor_divides ? world_size / t : group_size;
  if (!tensor_divides || g < 1 || g * t > world_size || world_size % (g * t) != 0)
    throw InternalError("comm", "shard group size " + std::to_string(group_size) +
                                    " with tensor size " + std::to_string(tensor_size) +
                                    " does not divide " + std::to_string(world_size) + " ranks");
  return {world_size, g, t};
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
  groups.replicate =
      split(world, shape.shard_rank(rank) * shape.tensor_size + shape.tensor_rank(rank), rank,
            shape.replica_group_name(rank));
  if (shape.tensor_size > 1) {
    groups.tensor = split(world, shape.tensor_group(rank), rank, shape.tensor_group_name(rank));
    groups.replica = split(world, shape.replica(rank), rank, shape.replica_name(rank));
  }
  return groups;
}

std::unique_ptr<MpiCommunicator> split_key_value_groups(const MpiCommunicator& tensor,
                                                        int replicas) {
  if (replicas <= 1) return nullptr;
  NSS_ASSERT(tensor.size() % replicas == 0, "comm",
             "key/value replicas must divide the tensor group");
  const int group = tensor.rank() / replicas;
  return split(tensor.handle(), group, tensor.rank(),
               "key/value group " + std::to_string(group) + " of " + tensor.group());
}

}  // namespace nss::comm

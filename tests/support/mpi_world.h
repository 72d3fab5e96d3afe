// This process's rank and the world size, for MPI tests that need no communicator.
#pragma once

#include <mpi.h>

namespace nss::testing {

inline int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

inline int world_size() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

}  // namespace nss::testing

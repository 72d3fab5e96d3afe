// MPI start-up and shutdown, and where this process sits: rank, node-local
// rank, host, usable CPUs and the thread count it should use.
#pragma once

#include <string>
#include <vector>

#include <mpi.h>

#include "core/error.h"

namespace nss::comm {

/// Initialises MPI with MPI_THREAD_MULTIPLE (the watchdog and checkpoint
/// writer call MPI from their own threads) and finalizes it on destruction.
class MpiRuntime {
 public:
  MpiRuntime(int* argc, char*** argv);
  ~MpiRuntime();
  MpiRuntime(const MpiRuntime&) = delete;
  MpiRuntime& operator=(const MpiRuntime&) = delete;
};

/// Ends every process of the job with `code` (MPI_Abort on the world).
[[noreturn]] void abort_job(ExitCode code);

struct ProcessLayout {
  int rank = 0;
  int size = 1;
  int local_rank = 0;  // from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)
  int local_size = 1;
  std::string host;
  int usable_cpus = 1;       // sched_getaffinity of this process
  int threads_per_rank = 1;  // OMP_NUM_THREADS, else usable CPUs shared among local ranks
  bool cpus_shared = true;   // local ranks share one CPU set (not bound by the launcher)
};

/// Rank and node-local rank of this process in `comm` (collective).
struct RankPosition {
  int rank = 0, size = 1, local_rank = 0, local_size = 1;
};
RankPosition rank_position(MPI_Comm comm);

/// Discovers the layout over `world` (collective).
ProcessLayout discover_layout(MPI_Comm world);

/// Host name of every rank, in rank order (collective; result on every rank).
std::vector<std::string> gather_hostnames(MPI_Comm world);

/// CPUs in this process's affinity mask.
int usable_cpus();

/// Threads per rank: OMP_NUM_THREADS when set to a positive integer, else
/// usable CPUs, divided among local ranks when they share the same CPUs.
int threads_per_rank(int usable, int local_size, bool cpus_shared);

}  // namespace nss::comm

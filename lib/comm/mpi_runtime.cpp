#include "comm/mpi_runtime.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sched.h>
#include <unistd.h>

#include "comm/mpi_check.h"
#include "core/host_and_time.h"

namespace nss::comm {

MpiRuntime::MpiRuntime(int* argc, char*** argv) {
  int provided = 0;
  NSS_MPI_CHECK(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided));
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (provided < MPI_THREAD_MULTIPLE)
    throw InternalError("comm", "the MPI library does not provide MPI_THREAD_MULTIPLE",
                        "use an MPI built with thread support (Debian's Open MPI has it)");
}

MpiRuntime::~MpiRuntime() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

void abort_job(ExitCode code) {
  MPI_Abort(MPI_COMM_WORLD, static_cast<int>(code));
  std::_Exit(static_cast<int>(code));  // MPI_Abort does not return; this is for the compiler
}

RankPosition rank_position(MPI_Comm comm) {
  RankPosition p;
  NSS_MPI_CHECK(MPI_Comm_rank(comm, &p.rank));
  NSS_MPI_CHECK(MPI_Comm_size(comm, &p.size));
  MPI_Comm local;
  NSS_MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, p.rank, MPI_INFO_NULL, &local));
  NSS_MPI_CHECK(MPI_Comm_rank(local, &p.local_rank));
  NSS_MPI_CHECK(MPI_Comm_size(local, &p.local_size));
  MPI_Comm_free(&local);
  return p;
}

int usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) {
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 0 ? static_cast<int>(online) : 1;
  }
  return CPU_COUNT(&set);
}

int threads_per_rank(int usable, int local_size, bool cpus_shared) {
  if (const char* env = std::getenv("OMP_NUM_THREADS")) {
    char* end = nullptr;
    const long value = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && value > 0) return static_cast<int>(value);
  }
  const int threads = cpus_shared ? usable / std::max(1, local_size) : usable;
  return std::max(1, threads);
}

ProcessLayout discover_layout(MPI_Comm world) {
  ProcessLayout layout;
  NSS_MPI_CHECK(MPI_Comm_rank(world, &layout.rank));
  NSS_MPI_CHECK(MPI_Comm_size(world, &layout.size));
  MPI_Comm local;
  NSS_MPI_CHECK(
      MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, layout.rank, MPI_INFO_NULL, &local));
  NSS_MPI_CHECK(MPI_Comm_rank(local, &layout.local_rank));
  NSS_MPI_CHECK(MPI_Comm_size(local, &layout.local_size));

  // Do the local ranks share CPUs (no launcher binding) or own disjoint sets?
  cpu_set_t mine;
  CPU_ZERO(&mine);
  sched_getaffinity(0, sizeof mine, &mine);
  std::vector<cpu_set_t> all(static_cast<std::size_t>(layout.local_size));
  NSS_MPI_CHECK(
      MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, local));
  bool shared = false;
  for (int other = 0; other < layout.local_size; ++other) {
    if (other == layout.local_rank) continue;
    cpu_set_t both;
    CPU_AND(&both, &mine, &all[static_cast<std::size_t>(other)]);
    if (CPU_COUNT(&both) > 0) shared = true;
  }
  MPI_Comm_free(&local);

  layout.host = host_name();
  layout.usable_cpus = usable_cpus();
  layout.cpus_shared = shared || layout.local_size == 1;
  layout.threads_per_rank = threads_per_rank(layout.usable_cpus, layout.local_size, shared);
  return layout;
}

std::vector<std::string> gather_hostnames(MPI_Comm world) {
  int size = 0;
  NSS_MPI_CHECK(MPI_Comm_size(world, &size));
  char mine[256] = {};
  std::strncpy(mine, host_name().c_str(), sizeof mine - 1);
  std::vector<char> all(static_cast<std::size_t>(size) * sizeof mine);
  NSS_MPI_CHECK(
      MPI_Allgather(mine, sizeof mine, MPI_CHAR, all.data(), sizeof mine, MPI_CHAR, world));
  std::vector<std::string> hosts;
  for (int r = 0; r < size; ++r)
    hosts.emplace_back(&all[static_cast<std::size_t>(r) * sizeof mine]);
  return hosts;
}

}  // namespace nss::comm

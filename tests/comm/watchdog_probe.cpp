// A job that hangs on purpose, for the watchdog test: after a few collectives,
// rank 1 either skips one and sleeps ("skip") or issues a different
// collective than the others ("diverge"). The watchdog must end the job with
// exit code 6 and name rank 1. "group" and "replica": rank 3 skips a
// collective of its hybrid-sharding shard or replica group; the diagnosis
// names rank 3 and the group.
#include <chrono>
#include <cstring>
#include <thread>

#include "comm/mpi_app.h"
#include "comm/mpi_communicator.h"
#include "comm/shard_groups.h"
#include "comm/watchdog.h"

namespace {

// Hybrid sharding's groups of 2 ranks: rank 3 skips a collective of its
// shard group ("group") or of its replica group ("replica"), so its peer
// there (rank 2, or rank 1) waits while the other group finishes theirs.
nss::ExitCode hang_in_a_group(bool replica) {
  auto world = nss::comm::MpiCommunicator::create(MPI_COMM_WORLD);
  auto groups =
      nss::comm::split_shard_groups(MPI_COMM_WORLD, nss::comm::shard_group_shape(world->size(), 2));
  nss::comm::Watchdog watchdog({world.get(), groups.shard.get(), groups.replicate.get()},
                               MPI_COMM_WORLD, /*timeout_s=*/2.0);
  nss::comm::Communicator& group = replica ? *groups.replicate : *groups.shard;
  float value = 1;
  for (int step = 0; step < 3; ++step) {
    nss::comm::CollectiveLabel label(group, "unit " + std::to_string(step) + " backward");
    group.all_reduce(&value, 1, nss::comm::ReduceOp::kSum);
  }
  nss::comm::CollectiveLabel label(group, "unit 3 backward");
  if (world->rank() != 3) group.all_reduce(&value, 1, nss::comm::ReduceOp::kSum);
  std::this_thread::sleep_for(std::chrono::seconds(120));
  return nss::ExitCode::kOk;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "skip";
  if (mode == "group" || mode == "replica")
    return nss::comm::run_mpi_app(argc, argv,
                                  [&](int) { return hang_in_a_group(mode == "replica"); });
  return nss::comm::run_mpi_app(argc, argv, [&](int) {
    auto comm = nss::comm::MpiCommunicator::create(MPI_COMM_WORLD);
    nss::comm::Watchdog watchdog(*comm, MPI_COMM_WORLD, /*timeout_s=*/2.0);
    float value = 1;
    for (int step = 0; step < 3; ++step) {
      nss::comm::CollectiveLabel label(*comm, "step " + std::to_string(step));
      comm->all_reduce(&value, 1, nss::comm::ReduceOp::kSum);
    }
    nss::comm::CollectiveLabel label(*comm, "the collective rank 1 misses");
    if (comm->rank() == 1 && mode == "skip") {
      std::this_thread::sleep_for(std::chrono::seconds(120));
    } else if (comm->rank() == 1 && mode == "diverge") {
      comm->barrier();
    } else {
      comm->all_reduce(&value, 1, nss::comm::ReduceOp::kSum);
    }
    return nss::ExitCode::kOk;
  });
}

// A job that hangs on purpose, for the watchdog test: after a few collectives,
// rank 1 either skips one and sleeps ("skip") or issues a different
// collective than the others ("diverge"). The watchdog must end the job with
// exit code 6 and name rank 1.
#include <chrono>
#include <cstring>
#include <thread>

#include "comm/mpi_app.h"
#include "comm/mpi_communicator.h"
#include "comm/watchdog.h"

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "skip";
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

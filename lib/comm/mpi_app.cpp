#include "comm/mpi_app.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include <spdlog/spdlog.h>

#include "comm/agreement.h"
#include "comm/mpi_runtime.h"
#include "core/deadline.h"
#include "core/failure.h"
#include "core/temporary_files.h"
#include "log/logger.h"

namespace nss::comm {
namespace {

std::string g_program = "nss_hpc";

void print_error(const std::string& text) {
  std::fprintf(stderr, "%s: error: %s\n", g_program.c_str(), text.c_str());
  std::fflush(stderr);
}

// A local failure: say why, then take every rank down with the same code.
[[noreturn]] void abort_with(ExitCode code, const std::string& text) {
  spdlog::error("{}", text);
  log::flush();
  print_error(text);
  abort_job(code);
}

// The normal way out. A thread abandoned by run_with_deadline may be stuck
// holding a lock that exit handlers need (HDF5's, for one), so then MPI is
// finalized by hand and the process leaves without running them.
int finish(std::unique_ptr<MpiRuntime>& mpi, ExitCode code) {
  log::flush();
  if (abandoned_threads() > 0) {
    spdlog::debug("leaving without exit handlers: {} abandoned thread(s)", abandoned_threads());
    log::flush();
    mpi.reset();
    std::fflush(nullptr);
    std::_Exit(static_cast<int>(code));
  }
  return static_cast<int>(code);
}

}  // namespace

int run_mpi_app(int& argc, char**& argv, const std::function<ExitCode(int rank)>& body) {
  if (argc > 0) {
    g_program = argv[0];
    g_program.erase(0, g_program.rfind('/') + 1);
  }
  std::unique_ptr<MpiRuntime> mpi;
  try {
    mpi = std::make_unique<MpiRuntime>(&argc, &argv);
  } catch (const Error& e) {
    print_error(e.what());
    return static_cast<int>(e.code());
  }
  // Until a job installs its stop handlers (comm/stop_signal.h), a terminating
  // signal removes the outputs not yet published and ends the rank.
  remove_temporaries_on_termination();
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  log::init(rank);
  try {
    return finish(mpi, body(rank));
  } catch (const AgreedError& e) {
    // Every rank holds the same error; rank 0 speaks for all of them.
    if (rank == 0) print_error(e.what());
    spdlog::debug("leaving with the agreed error: {}", e.what());
    return finish(mpi, e.code());
  } catch (...) {
    Failure failure = classify(std::current_exception());
    if (failure.out_of_memory) failure.message += " on rank " + std::to_string(rank);
    abort_with(failure.code, failure.text());
  }
}

}  // namespace nss::comm

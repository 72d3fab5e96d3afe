// nss_synthesize with a signal raised on rank 0 right after one stage, for
// the end-to-end test of a job stopped exactly at a stage boundary (the
// other ranks learn of it only through the agreement). Same job code path
// as nss_synthesize (pipeline::run_pipeline); only the test hook differs.
//   pipeline_stop_probe STAGE TERM|USR1 TABLE.csv --config CONFIG.yaml [--set key=value]...
#include <csignal>
#include <cstring>
#include <string>

#include "comm/mpi_app.h"
#include "comm/mpi_communicator.h"
#include "pipeline/pipeline_job.h"

int main(int argc, char** argv) {
  return nss::comm::run_mpi_app(argc, argv, [&](int rank) {
    if (argc < 4) return nss::ExitCode::kUsage;
    const std::string stop_after = argv[1];
    const int signal = std::strcmp(argv[2], "USR1") == 0 ? SIGUSR1 : SIGTERM;
    nss::pipeline::SynthesizeOptions options;
    options.table = argv[3];
    for (int i = 4; i + 1 < argc; i += 2) {
      if (std::strcmp(argv[i], "--config") == 0) options.config_path = argv[i + 1];
      if (std::strcmp(argv[i], "--set") == 0) options.overrides.push_back(argv[i + 1]);
    }
    nss::pipeline::PipelineHooks hooks;
    hooks.after_stage = [&](const char* stage) {
      if (rank == 0 && stop_after == stage) std::raise(signal);
    };
    const auto world = nss::comm::MpiCommunicator::create(MPI_COMM_WORLD);
    return nss::pipeline::run_pipeline(*world, world->handle(), options, hooks);
  });
}

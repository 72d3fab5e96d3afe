// nss_synthesize TABLE.csv [--config configs/synthesize.yaml] [--set key.path=value]...
//                [--print-config]
// From a table to evaluated synthetic records in one job: prepare (holdout,
// personal data) -> preflight -> fine-tune -> sample -> evaluate, each stage
// restartable (docs/pipeline.md).
#include <csignal>

#include <CLI/CLI.hpp>

#include "comm/mpi_app.h"
#include "comm/mpi_communicator.h"
#include "mpi_cli.h"
#include "pipeline/pipeline_job.h"

int main(int argc, char** argv) {
  return nss::comm::run_mpi_app(argc, argv, [&](int rank) {
    // A file-size limit (ulimit -f) fails a write (reported) instead of killing the rank.
    std::signal(SIGXFSZ, SIG_IGN);
    nss::pipeline::SynthesizeOptions options;
    options.config_path = "configs/synthesize.yaml";
    CLI::App cli{
        "nss_synthesize: a table -> synthetic records of it, fine-tuned, sampled and evaluated "
        "in one job (docs/pipeline.md)"};
    cli.add_option("table", options.table, "The table to synthesize (CSV)")->required();
    cli.add_option("--config", options.config_path,
                   "YAML configuration with a pipeline: section (default "
                   "configs/synthesize.yaml)");
    cli.add_option("--set", options.overrides, "Override a key: --set pipeline.records=500")
        ->allow_extra_args(false);
    cli.add_flag("--print-config", options.print_config, "Print the resolved configuration");
    if (!nss::parse_rank_arguments(cli, argc, argv, rank,
                                   "nss_synthesize TABLE.csv [--config CONFIG.yaml] "
                                   "[--set key.path=value]... [--print-config]"))
      return nss::ExitCode::kOk;
    const auto world = nss::comm::MpiCommunicator::create(MPI_COMM_WORLD);
    return nss::pipeline::run_pipeline(*world, world->handle(), options);
  });
}

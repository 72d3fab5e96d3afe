// nss_hpc CONFIG.yaml [--set key.path=value]... [--preflight-only] [--print-config]
#include <CLI/CLI.hpp>

#include "comm/mpi_app.h"
#include "mpi_cli.h"
#include "train/job.h"

int main(int argc, char** argv) {
  return nss::comm::run_mpi_app(argc, argv, [&](int rank) {
    nss::train::JobOptions options;
    CLI::App cli{"nss_hpc: train and fine-tune Llama-family models with sharded data parallelism"};
    cli.add_option("config", options.config_path, "YAML configuration (see docs/configuration.md)")
        ->required();
    cli.add_option("--set", options.overrides, "Override a key: --set training.lr=1e-4")
        ->allow_extra_args(false);
    cli.add_flag("--preflight-only", options.preflight_only, "Stop after the preflight verdict");
    cli.add_flag("--print-config", options.print_config, "Print the resolved configuration");
    if (!nss::parse_rank_arguments(cli, argc, argv, rank,
                                   "nss_hpc CONFIG.yaml [--set key.path=value]... "
                                   "[--preflight-only] [--print-config]"))
      return nss::ExitCode::kOk;
    options.command_line.assign(argv, argv + argc);
    return nss::train::run_job(options);
  });
}

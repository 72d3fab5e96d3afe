// nss_generate --model HF_DIR|STEP_DIR|ADAPTER_DIR [--base HF_DIR] [--tokenizer PATH]
//              [--dtype auto|fp32|bf16] [--quantize auto|none|nf4 [--double-quant]]
//              (--prompt TEXT | --prompts FILE.jsonl | --records N --output DIR)
//              [--max-new-tokens 256] [--temperature 0.9] [--top-k 0] [--top-p 1.0] [--seed 0]
//              [--num-samples 1] [--stop TEXT]... [--batch-size 8] [--output OUT.jsonl]
//              [--invalid-fraction-threshold 0.8] [--patience 1] [--constrain schema|none]
#include <csignal>

#include <CLI/CLI.hpp>

#include "comm/agreement.h"
#include "comm/mpi_app.h"
#include "comm/mpi_communicator.h"
#include "generate/generation_job.h"
#include "generate_cli.h"
#include "log/logger.h"

int main(int argc, char** argv) {
  return nss::comm::run_mpi_app(argc, argv, [&](int rank) {
    nss::log::init(rank);  // stderr: stdout carries only the samples
    // A file-size limit (ulimit -f) fails an output's write (exit 2) instead
    // of killing the rank.
    std::signal(SIGXFSZ, SIG_IGN);
    const auto world = nss::comm::MpiCommunicator::create(MPI_COMM_WORLD);
    nss::generate::GenerationJob job;
    CLI::App cli{"nss_generate: write text, or synthetic records, with a model"};
    nss::add_generate_options(cli, job);
    // Every rank parses the same argv: a bad flag is the same error everywhere.
    bool help = false;
    nss::comm::run_on_all(*world, [&] {
      help = !nss::parse_generate_arguments(cli, argc, argv, job);
      if (!help) nss::generate::check_generation_job(job);
    });
    if (help) return nss::ExitCode::kOk;
    return nss::generate::run_generation(*world, world->handle(), job);
  });
}

// nss_eval --model HF_DIR|STEP_DIR|ADAPTER_DIR [--base HF_DIR] --data DATA.h5 [--seq-len 128]
//          [--quantize auto|none|nf4 [--double-quant]] [--batches 4] [--batch-size 2]
//          [--packing windows|documents|none] [--long-documents truncate|split]
#include <cstdio>

#include <CLI/CLI.hpp>

#include "config/config.h"
#include "core/app_main.h"
#include "eval/model_evaluation.h"
#include "log/logger.h"
#include "model_cli.h"
#include "tool_cli.h"

int main(int argc, char** argv) {
  return nss::run_app("nss_eval", [&] {
    nss::log::init(0);  // stderr: stdout carries only the result line
    nss::eval::EvalOptions options;
    CLI::App cli{
        "nss_eval: mean next-token loss of a model on a token dataset, windows taken in order; "
        "prints {\"loss\": ..., \"tokens\": ...}"};
    nss::add_model_options(cli, options.model);
    cli.add_option("--data", options.data_path, "Token dataset (HDF5, docs/data.md)")->required();
    // The ranges of data.seq_len, eval.batches and training.micro_batch_size.
    const auto in = [](const nss::config::Range<std::int64_t>& range) {
      return CLI::Range(range.min, range.max);
    };
    cli.add_option("--seq-len", options.seq_len, "Tokens per window, plus one target")
        ->check(in(nss::config::kSeqLenRange))
        ->capture_default_str();
    cli.add_option("--batches", options.batches, "Batches to score")
        ->check(in(nss::config::kEvalBatchesRange))
        ->capture_default_str();
    cli.add_option("--batch-size", options.batch_size, "Windows (or packed rows) per batch")
        ->check(in(nss::config::kMicroBatchRange))
        ->capture_default_str();
    nss::add_choice_option(cli, "--packing", options.packing,
                           "How samples are made, as data.packing");
    nss::add_choice_option(cli, "--long-documents", options.long_documents,
                           "A document longer than a row, as data.long_documents");
    if (!nss::parse_tool_arguments(cli, argc, argv, "nss_eval",
                                   "nss_eval --model HF_DIR|STEP_DIR|ADAPTER_DIR [--base HF_DIR] "
                                   "--data DATA.h5 [--seq-len "
                                   "128] [--batches 4] [--batch-size 2] [--packing "
                                   "windows|documents|none] [--long-documents truncate|split]"))
      return nss::ExitCode::kOk;
    const auto result = nss::eval::run_evaluation(options);
    std::printf("%s\n", nss::eval::eval_result_json(result).c_str());
    return nss::ExitCode::kOk;
  });
}

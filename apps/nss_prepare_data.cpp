// nss_prepare_data --input PATH [--input PATH]... --output OUT.h5
//     [--format text|jsonl|csv|sft|records] [--max-tokens N]
//     [--prompt-template TEXT] [--group-by COLUMN [--order-by COLUMN]]
//     [--holdout FRACTION|COUNT [--max-holdout N] [--holdout-seed N] [--holdout-eval]]
//     [--pii off|detect|replace|hash|redact [--pii-entities LIST] [--pii-column COL=ENTITY]...
//      [--pii-keep COL]... [--pii-key FILE] [--pii-report FILE] [--pii-ner-model DIR]]
//     [--tokenizer DIR_OR_tokenizer.json [--bos-token TOKEN|none] [--eos-token TOKEN]]
#include <csignal>
#include <cstdio>

#include <CLI/CLI.hpp>

#include "config/config.h"
#include "core/app_main.h"
#include "data/prepare_dataset.h"
#include "h5/errors.h"
#include "tool_cli.h"

namespace {

// What was set aside, or why nothing was.
void print_holdout(const nss::data::PrepareSummary& summary) {
  if (!summary.warning.empty())
    std::fprintf(stderr, "nss_prepare_data: warning: %s\n", summary.warning.c_str());
  if (summary.holdout_table.empty()) return;
  std::printf("held out %lld rows (%lld groups; aimed at %lld) in %s (owner-only: private data)\n",
              static_cast<long long>(summary.holdout_rows),
              static_cast<long long>(summary.holdout_groups),
              static_cast<long long>(summary.holdout_target), summary.holdout_table.c_str());
  if (!summary.holdout_tokens.empty())
    std::printf("wrote the holdout as %s (use it as eval.path)\n", summary.holdout_tokens.c_str());
}

void add_pii_options(CLI::App& cli, nss::data::PiiPreparation& pii) {
  cli.add_option("--pii", pii.mode,
                 "records and csv: off, detect, replace, hash or redact the personal data "
                 "(default: replace for records, off otherwise; docs/data.md, \"Personal "
                 "data\")");
  cli.add_option("--pii-entities", pii.entities,
                 "the entities to look for, comma-separated, or 'all' (default: NeMo Safe "
                 "Synthesizer's 15)");
  cli.add_option("--pii-column", pii.columns,
                 "COLUMN=ENTITY (or COLUMN=none): the column's entity, not the classifier's "
                 "(repeatable)");
  cli.add_option("--pii-keep", pii.keep,
                 "a column left as it is, never classified or scanned (repeatable)");
  cli.add_option("--pii-key", pii.key_path,
                 "the secret key of replace and hash (default OUT.pii.key, created owner-only "
                 "when absent); reuse one to keep surrogates the same across tables");
  cli.add_option("--pii-report", pii.report_path,
                 "what was found and done, per column (default OUT.pii.json)");
  cli.add_option("--pii-ner-model", pii.ner_model,
                 "a local directory with a BERT or DistilBERT named-entity tagger "
                 "(config.json, model.safetensors, tokenizer.json) that finds names and places "
                 "in free text the patterns miss; never downloaded");
}

}  // namespace

int main(int argc, char** argv) {
  return nss::run_app("nss_prepare_data", [&] {
    // An output on a full disk stays half-closed; HDF5's exit handler would crash on it.
    nss::h5::leave_open_files_to_the_kernel_at_exit();
    // A file-size limit (ulimit -f) then fails a write with EFBIG, which
    // removes the partial output, instead of killing the tool beside it.
    std::signal(SIGXFSZ, SIG_IGN);
    nss::data::PrepareOptions options;
    std::string format;
    std::int64_t max_tokens = 0;
    CLI::App cli{
        "nss_prepare_data: text, JSONL or CSV documents, or sft/records examples -> token "
        "dataset, byte-level or with a tokenizer.json (docs/data.md)"};
    cli.add_option("--input", options.inputs,
                   "Input file (repeatable): a text file is one document, a JSONL line one "
                   "record, a CSV row one JSON object")
        ->required();
    cli.add_option("--output", options.output, "Token dataset to write (HDF5)")->required();
    cli.add_option(
        "--format", format,
        "text, jsonl or csv (default: from each file's extension); sft (JSONL "
        "prompt/completion) or records (CSV rows as examples) train on the answers only");
    auto* max_tokens_option =
        cli.add_option("--max-tokens", max_tokens,
                       "Examples: keep the first N tokens (drops those left without an answer)")
            // Up to the longest row a run can train on: data.seq_len's bound + 1.
            ->check(CLI::Range(std::int64_t{1}, nss::config::kSeqLenRange.max + 1));
    cli.add_option("--prompt-template", options.records.prompt_template,
                   "records: the instruction before each row; {columns}, {group_by}, {order_by}");
    cli.add_option("--group-by", options.records.group_by,
                   "records: one example per value of this column");
    cli.add_option("--order-by", options.records.order_by,
                   "records: order of the rows inside a group");
    cli.add_option("--holdout", options.holdout.size,
                   "records: rows set aside for nss_evaluate, a fraction below 1 (0.05) or a "
                   "count; written to OUT.holdout.csv (docs/data.md, \"Holdout\")");
    cli.add_option("--max-holdout", options.holdout.max_rows,
                   "records: at most this many holdout rows (default 2000)")
        ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 40));
    cli.add_option("--holdout-seed", options.holdout.seed,
                   "records: the seed that chooses the holdout rows (default 0)")
        ->check(CLI::Range(std::uint64_t{0}, (std::uint64_t{1} << 63) - 1));
    cli.add_flag("--holdout-eval", options.holdout_eval,
                 "records: also write the holdout as OUT.holdout.h5, for eval.path");
    add_pii_options(cli, options.pii);
    cli.add_option("--tokenizer", options.tokenizer.path,
                   "tokenizer.json or the directory holding it (default: byte-level); the "
                   "output equals scripts/prepare_data_hf.py's");
    cli.add_option("--bos-token", options.tokenizer.bos_token,
                   "with --tokenizer: beginning-of-document token, or 'none'");
    cli.add_option("--eos-token", options.tokenizer.eos_token,
                   "with --tokenizer: end-of-document token");
    if (!nss::parse_tool_arguments(cli, argc, argv, "nss_prepare_data",
                                   "nss_prepare_data --input PATH [--input PATH]... --output "
                                   "OUT.h5 [--format text|jsonl|csv|sft|records]"))
      return nss::ExitCode::kOk;
    if (!format.empty()) options.format = nss::data::parse_input_format(format);
    if (max_tokens_option->count() > 0) options.max_tokens = max_tokens;
    nss::data::PreparedTokenizer tokenizer;
    const auto summary = nss::data::prepare_dataset(options, &tokenizer);
    std::printf("wrote %s: %lld documents, %lld tokens (%s, vocab_size %lld) from %lld bytes",
                options.output.c_str(), static_cast<long long>(summary.documents),
                static_cast<long long>(summary.tokens), tokenizer.name.c_str(),
                static_cast<long long>(tokenizer.vocab_size),
                static_cast<long long>(summary.input_bytes));
    if (options.format && nss::data::is_example_format(*options.format))
      std::printf(
          "; %lld target tokens; %lld examples dropped (no answer token within "
          "--max-tokens)",
          static_cast<long long>(summary.target_tokens),
          static_cast<long long>(summary.dropped_examples));
    std::printf("\n");
    if (!summary.pii.empty()) std::printf("%s\n", summary.pii.c_str());
    if (!summary.pii_warning.empty())
      std::fprintf(stderr, "nss_prepare_data: warning: %s\n", summary.pii_warning.c_str());
    print_holdout(summary);
    return nss::ExitCode::kOk;
  });
}

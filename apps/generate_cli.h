// nss_generate's command line: the options and what their presence means.
#pragma once

#include <CLI/CLI.hpp>

#include "generate/generation_job.h"
#include "model_cli.h"
#include "tool_cli.h"

namespace nss {

inline constexpr const char* kGenerateUsage =
    "nss_generate --model HF_DIR|STEP_DIR|ADAPTER_DIR [--base HF_DIR] [--tokenizer PATH] "
    "[--dtype auto|fp32|bf16] [--quantize auto|none|nf4 [--double-quant]] "
    "(--prompt TEXT | --prompts FILE.jsonl | --records N --output DIR [--records-data FILE.h5]) "
    "[--max-new-tokens 256] "
    "[--temperature 0.9] [--top-k 0] [--top-p 1.0] [--seed 0] [--num-samples 1] [--stop TEXT]... "
    "[--batch-size 8] [--output OUT.jsonl] [--invalid-fraction-threshold 0.8] [--patience 1] "
    "[--constrain schema|none [--constrain-categories [--allow-uncovered-categories]]]";

inline void add_generate_options(CLI::App& cli, generate::GenerationJob& job) {
  auto& request = job.request;
  request.sampling = {0.9, 0, 1.0, 0};
  add_model_options(cli, job.model);
  cli.add_option("--tokenizer", job.tokenizer,
                 "tokenizer.json, tokenizer.model or a directory holding one (default: the "
                 "training data's, else the model's)");
  cli.add_option("--prompt", job.prompt, "One prompt");
  cli.add_option("--prompts", job.prompts, "JSONL with a \"prompt\" per line");
  cli.add_option("--records", job.records.wanted,
                 "Generate this many valid records with the prompt of the training data (a step "
                 "fine-tuned on --format records data)");
  cli.add_option("--records-data", job.records_data,
                 "--records: the prepared token file whose prompt and schema to use, for a model "
                 "that records none (a PEFT adapter, a Hugging Face directory)");
  cli.add_option("--max-new-tokens", request.max_new_tokens, "Tokens to generate at most")
      ->capture_default_str();
  cli.add_option("--temperature", request.sampling.temperature, "0: greedy")->capture_default_str();
  cli.add_option("--top-k", request.sampling.top_k, "0: no limit")->capture_default_str();
  cli.add_option("--top-p", request.sampling.top_p, "1: no limit")->capture_default_str();
  cli.add_option("--seed", request.sampling.seed, "Random seed")->capture_default_str();
  cli.add_option("--num-samples", request.num_samples, "Samples per prompt")->capture_default_str();
  cli.add_option("--stop", request.stop, "Text that ends a sample (repeatable)");
  cli.add_option("--batch-size", request.batch_size, "Sequences decoded together")
      ->capture_default_str();
  cli.add_option("--output", job.output,
                 "JSONL file to write (default: stdout); with --records, the directory");
  add_choice_option(cli, "--dtype", job.dtype, "auto: bf16 on a GPU, fp32 on the CPU");
  cli.add_option("--invalid-fraction-threshold", job.records.invalid_fraction_threshold,
                 "--records: stop when more than this share of the records is invalid")
      ->capture_default_str();
  cli.add_option("--patience", job.records.patience, "--records: ... for this many rounds in a row")
      ->capture_default_str();
  cli.add_option("--constrain", job.records.constrain,
                 "--records: schema (only tokens that keep a record of the table's schema "
                 "possible) or none")
      ->capture_default_str();
  cli.add_flag("--constrain-categories", job.records.categories,
               "--records: text columns of few values take one of those the table held");
  cli.add_flag("--allow-uncovered-categories", job.records.allow_uncovered,
               "--constrain-categories on a private step: accept values outside the DP guarantee");
}

/// parse_tool_arguments, then which options were given; false after --help.
inline bool parse_generate_arguments(CLI::App& cli, int argc, char** argv,
                                     generate::GenerationJob& job) {
  if (!parse_tool_arguments(cli, argc, argv, "nss_generate", kGenerateUsage)) return false;
  job.records_given = cli.count("--records") > 0;
  job.num_samples_given = cli.count("--num-samples") > 0;
  job.stop_given = cli.count("--stop") > 0;
  job.constrain_given = cli.count("--constrain") > 0;
  return true;
}

}  // namespace nss

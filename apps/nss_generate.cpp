// nss_generate --model HF_DIR|STEP_DIR|ADAPTER_DIR [--base HF_DIR] [--tokenizer PATH]
//              [--dtype auto|fp32|bf16] [--quantize auto|none|nf4 [--double-quant]]
//              (--prompt TEXT | --prompts FILE.jsonl | --records N --output DIR)
//              [--max-new-tokens 256] [--temperature 0.9] [--top-k 0] [--top-p 1.0] [--seed 0]
//              [--num-samples 1] [--stop TEXT]... [--batch-size 8] [--output OUT.jsonl]
//              [--invalid-fraction-threshold 0.8] [--patience 1]
//
// Under mpirun every rank holds the whole model. Prompts: each rank generates
// a contiguous share and rank 0 writes every rank's lines in rank order.
// Records: the ranks sample in rounds and rank 0 judges the samples in
// number order (generate/record_generation.h). Either way the output is the
// one a single process writes.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "comm/agreement.h"
#include "comm/mpi_app.h"
#include "comm/mpi_communicator.h"
#include "comm/stop_signal.h"
#include "core/fs.h"
#include "core/output_directory.h"
#include "core/output_location.h"
#include "data/input_file.h"
#include "eval/inference_model.h"
#include "generate/generation.h"
#include "generate/generation_device.h"
#include "generate/record_generation.h"
#include "generate/records_task.h"
#include "log/directory_lock.h"
#include "log/logger.h"
#include "quantize_cli.h"
#include "tool_cli.h"

namespace {

namespace generate = nss::generate;

const char* kUsage =
    "nss_generate --model HF_DIR|STEP_DIR|ADAPTER_DIR [--base HF_DIR] [--tokenizer PATH] "
    "[--dtype auto|fp32|bf16] [--quantize auto|none|nf4 [--double-quant]] "
    "(--prompt TEXT | --prompts FILE.jsonl | --records N --output DIR) [--max-new-tokens 256] "
    "[--temperature 0.9] [--top-k 0] [--top-p 1.0] [--seed 0] [--num-samples 1] [--stop TEXT]... "
    "[--batch-size 8] [--output OUT.jsonl] [--invalid-fraction-threshold 0.8] [--patience 1]";

constexpr nss::log::DirectoryRole kRecordsDirectory{"records output directory", "--output",
                                                    "--output DIR", nss::ExitCode::kUsage};

// The "prompt" of each line of a JSONL file (scripts/render_chat_prompts.py
// turns {"messages": ...} lines into such lines).
std::vector<std::string> read_prompts(const std::string& path) {
  std::vector<std::string> prompts;
  nss::data::for_each_jsonl_record(
      path,
      [&](const nlohmann::ordered_json& record, std::int64_t line) {
        if (!record.is_object() || !record.contains("prompt") || !record.at("prompt").is_string())
          throw nss::DataError(
              "generate",
              nss::data::where(path, line) + ": a prompt line needs a string \"prompt\"",
              "render chat conversations first with scripts/render_chat_prompts.py");
        prompts.push_back(record.at("prompt").get<std::string>());
      },
      "--prompts");
  if (prompts.empty()) throw nss::DataError("generate", path + " holds no prompt");
  return prompts;
}

struct Arguments {
  std::string model, base, tokenizer, prompt, prompts, output, dtype = "auto";
  generate::GenerationRequest request;
  generate::RecordsRequest records;
  nss::eval::QuantizeRequest quantize;
};

nss::OutputTarget samples_target(const Arguments& args) {
  return {args.output, "generate"};
}

std::unique_ptr<generate::TextCodec> open_codec(const Arguments& args,
                                                const nss::eval::InferenceModel& m) {
  const auto text = [&](const char* key) {
    return m.dataset.is_object() && m.dataset.value(key, nlohmann::json()).is_string()
               ? m.dataset.at(key).get<std::string>()
               : std::string();
  };
  return generate::open_text_codec({args.tokenizer, text("tokenizer"), text("tokenizer_sha256"),
                                    m.pretrained_dir, m.model.config().vocab_size});
}

// One JSON line per sample, in prompt and sample order.
nss::ExitCode write_samples(nss::comm::Communicator& world, const Arguments& args,
                            const nss::eval::InferenceModel& m, const generate::TextCodec& codec) {
  std::string listing;  // rank 0 reads the prompts once; every rank gets the same list
  nss::comm::run_on_root(world, 0, [&] {
    listing = nlohmann::json(args.prompts.empty() ? std::vector<std::string>{args.prompt}
                                                  : read_prompts(args.prompts))
                  .dump();
  });
  nss::comm::broadcast_text(world, listing, 0);
  const auto prompts = nlohmann::json::parse(listing).get<std::vector<std::string>>();
  const auto count = static_cast<std::int64_t>(prompts.size());
  generate::GenerationRequest request = args.request;
  request.first_prompt_index = count * world.rank() / world.size();
  const std::int64_t last = count * (world.rank() + 1) / world.size();
  for (std::int64_t i = request.first_prompt_index; i < last; ++i)
    request.prompts.push_back(codec.encode_prompt(prompts[static_cast<std::size_t>(i)]));
  spdlog::info("[generate] {} prompts x {} samples on {} ranks with {}", count, request.num_samples,
               world.size(), codec.description());

  std::int64_t generated = 0;
  const auto start = std::chrono::steady_clock::now();
  std::string lines;
  const bool alone = world.size() == 1 && args.output.empty();
  nss::comm::run_on_all(world, [&] {
    generate::generate(m.model, codec, request, [&](const generate::GeneratedSample& s) {
      const std::string line = nlohmann::json{{"prompt_index", s.prompt_index},
                                              {"sample", s.sample},
                                              {"text", s.text},
                                              {"tokens", s.tokens},
                                              {"finish_reason", s.finish_reason}}
                                   .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                               "\n";
      generated += static_cast<std::int64_t>(s.tokens.size());
      if (!alone) return void(lines += line);
      std::fputs(line.c_str(), stdout);  // one process: each sample as soon as it is written
      std::fflush(stdout);
    });
  });
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  spdlog::info("[generate] rank {}: {} new tokens in {:.3f} s ({:.1f} tokens/s, prefill included)",
               world.rank(), generated, seconds, generated / std::max(seconds, 1e-9));
  if (alone) return nss::ExitCode::kOk;
  const auto shares = nss::comm::all_gather_text(world, lines);
  nss::comm::run_on_root(world, 0, [&] {
    std::string all;
    for (const auto& share : shares) all += share;
    if (args.output.empty()) {
      std::fputs(all.c_str(), stdout);
      std::fflush(stdout);
    } else {
      nss::write_output_file(samples_target(args), all);
    }
  });
  return nss::ExitCode::kOk;
}

// The files of --records in `dir`: synthetic.csv, synthetic.jsonl,
// invalid.jsonl and generation.json (the counts; "complete" false when the
// early stop ended it).
void write_records(nss::OutputDirectory& dir, const generate::RecordsOutcome& outcome,
                   const Arguments& args) {
  const generate::RecordCounts& t = outcome.records.totals();
  dir.keep();
  nss::write_output_file(dir.file("synthetic.csv"), outcome.records.csv());
  nss::write_output_file(dir.file("synthetic.jsonl"), outcome.records.jsonl());
  nss::write_output_file(dir.file("invalid.jsonl"), outcome.records.invalid_jsonl());
  nss::write_output_file(dir.file("generation.json"),
                         nlohmann::json{{"model", args.model},
                                        {"records_wanted", args.records.wanted},
                                        {"valid_records", t.valid},
                                        {"invalid_records", t.invalid},
                                        {"valid_fraction", outcome.records.valid_fraction()},
                                        {"samples", outcome.records.samples()},
                                        {"seconds", outcome.seconds},
                                        {"complete", outcome.records.done()}}
                                 .dump(2) +
                             "\n");
}

nss::ExitCode write_synthetic_records(nss::comm::Communicator& world, const Arguments& args,
                                      const nss::eval::InferenceModel& m,
                                      generate::TextCodec& codec,
                                      std::optional<nss::OutputDirectory>& dir) {
  const generate::RecordsTask task = generate::records_task(m.dataset, args.model);
  // The ids every training example began with: [BOS] prompt, tokenised alone.
  std::vector<std::int64_t> prompt;
  if (task.bos_token_id) prompt.push_back(*task.bos_token_id);
  const auto text = task.bos_token_id ? codec.encode_plain(task.prompt)
                                      : codec.encode_prompt(task.prompt);  // older steps
  prompt.insert(prompt.end(), text.begin(), text.end());
  if (task.eos_token_id) codec.also_end_at(*task.eos_token_id);
  // From here a signal ends the run between rounds with the records so far on disk.
  nss::comm::install_stop_signal_handlers();
  spdlog::info(
      "[records] {} valid records of {} columns wanted, {} samples per rank and round "
      "on {} ranks, with {}",
      args.records.wanted, task.schema.columns.size(), args.records.batch_size, world.size(),
      codec.description());
  const generate::RecordsOutcome outcome =
      generate::generate_records(world, m.model, codec, prompt, task.schema, args.records);
  nss::comm::run_on_root(world, 0, [&] {
    write_records(*dir, outcome, args);
    const generate::RecordCounts& t = outcome.records.totals();
    const std::string rate = fmt::format("{:.1f}% of the {} records judged were valid ({} samples)",
                                         100.0 * outcome.records.valid_fraction(),
                                         t.valid + t.invalid, outcome.records.samples());
    if (outcome.signal != nss::comm::StopRequest::kNone)
      return spdlog::warn(
          "[records] {} received: wrote the {} valid records so far to {} ({}); "
          "generation.json says complete: false",
          nss::comm::describe(outcome.signal), t.valid, args.output, rate);
    if (outcome.stopped_early)
      throw nss::DataError(
          "generate",
          fmt::format("stopped early: only {}; {} of {} records wanted were written to {}", rate,
                      t.valid, args.records.wanted, args.output),
          fmt::format("the invalid fraction stayed above --invalid-fraction-threshold {} for "
                      "--patience {} round(s): read {}/invalid.jsonl for the reasons; train "
                      "longer, raise --max-new-tokens if records are cut off, or lower "
                      "--temperature",
                      args.records.invalid_fraction_threshold, args.records.patience, args.output));
    spdlog::info(
        "[records] wrote {} valid records to {}/synthetic.csv (+ synthetic.jsonl, "
        "invalid.jsonl, generation.json); {}; {:.1f} s, {:.2f} valid records/s",
        t.valid, args.output, rate, outcome.seconds, t.valid / std::max(outcome.seconds, 1e-9));
  });
  return outcome.signal == nss::comm::StopRequest::kNone ? nss::ExitCode::kOk
                                                         : nss::comm::exit_code_for(outcome.signal);
}

// A run that a signal ended (generation.json says complete: false) is run
// again into its directory, as a requeued job is: its files are replaced.
// A complete run's records are never overwritten.
nss::ExistingOutput records_policy(const std::string& dir) {
  const std::string summary = dir + "/generation.json";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(summary, ec)) return nss::ExistingOutput::kRefuse;
  const auto json = nlohmann::json::parse(nss::read_text_file(summary, "generate"), nullptr, false);
  const bool stopped = json.is_object() && json.value("complete", nlohmann::json()).is_boolean() &&
                       !json.at("complete").get<bool>();
  return stopped ? nss::ExistingOutput::kReplaceFile : nss::ExistingOutput::kRefuse;
}

// Where the output goes, claimed before the model loads: the records
// directory (locked against a second job), or the JSONL file's path.
void claim_output(const Arguments& args, std::optional<nss::OutputDirectory>& dir,
                  std::optional<nss::log::DirectoryLock>& lock) {
  if (args.records.wanted == 0) return nss::check_output_path(samples_target(args));
  dir.emplace(nss::OutputTarget{args.output, "generate", "--output", records_policy(args.output)},
              kRecordsDirectory.what,
              std::vector<std::string>{"synthetic.csv", "synthetic.jsonl", "invalid.jsonl",
                                       "generation.json"});
  lock.emplace(args.output, kRecordsDirectory);
}

void check_modes(const Arguments& args, const CLI::App& cli) {
  const bool records = cli.count("--records") > 0;
  const int modes = (args.prompt.empty() ? 0 : 1) + (args.prompts.empty() ? 0 : 1) + records;
  if (modes != 1)
    throw nss::UsageError("cli", "give exactly one of --prompt, --prompts and --records",
                          std::string("usage: ") + kUsage);
  if (!records) return;
  for (const char* flag : {"--num-samples", "--stop"})
    if (cli.count(flag))
      throw nss::UsageError("cli", std::string(flag) + " does not apply to --records",
                            "--records samples the training prompt until N valid records");
  if (args.output.empty())
    throw nss::UsageError("cli", "--records needs --output DIR",
                          "synthetic.csv, synthetic.jsonl, invalid.jsonl and generation.json "
                          "are written there");
  generate::check_records_request(args.records);
}

}  // namespace

int main(int argc, char** argv) {
  return nss::comm::run_mpi_app(argc, argv, [&](int rank) {
    nss::log::init(rank);  // stderr: stdout carries only the samples
    const auto world = nss::comm::MpiCommunicator::create(MPI_COMM_WORLD);
    Arguments args;
    args.request.sampling = {0.9, 0, 1.0, 0};
    CLI::App cli{"nss_generate: write text, or synthetic records, with a model"};
    cli.add_option("--model", args.model,
                   "Hugging Face model directory, checkpoint step directory, or PEFT adapter "
                   "directory (with --base)")
        ->required();
    cli.add_option("--base", args.base,
                   "The base model's Hugging Face directory, for a PEFT adapter directory");
    nss::add_quantize_options(cli, args.quantize);
    cli.add_option("--tokenizer", args.tokenizer,
                   "tokenizer.json, tokenizer.model or a directory holding one (default: the "
                   "training data's, else the model's)");
    cli.add_option("--prompt", args.prompt, "One prompt");
    cli.add_option("--prompts", args.prompts, "JSONL with a \"prompt\" per line");
    cli.add_option("--records", args.records.wanted,
                   "Generate this many valid records with the prompt of the training data "
                   "(a step fine-tuned on --format records data)");
    cli.add_option("--max-new-tokens", args.request.max_new_tokens, "Tokens to generate at most")
        ->capture_default_str();
    cli.add_option("--temperature", args.request.sampling.temperature, "0: greedy")
        ->capture_default_str();
    cli.add_option("--top-k", args.request.sampling.top_k, "0: no limit")->capture_default_str();
    cli.add_option("--top-p", args.request.sampling.top_p, "1: no limit")->capture_default_str();
    cli.add_option("--seed", args.request.sampling.seed, "Random seed")->capture_default_str();
    cli.add_option("--num-samples", args.request.num_samples, "Samples per prompt")
        ->capture_default_str();
    cli.add_option("--stop", args.request.stop, "Text that ends a sample (repeatable)");
    cli.add_option("--batch-size", args.request.batch_size, "Sequences decoded together")
        ->capture_default_str();
    cli.add_option("--output", args.output,
                   "JSONL file to write (default: stdout); with --records, the directory");
    cli.add_option("--dtype", args.dtype, "auto (bf16 on a GPU, fp32 on the CPU), fp32 or bf16")
        ->capture_default_str();
    cli.add_option("--invalid-fraction-threshold", args.records.invalid_fraction_threshold,
                   "--records: stop when more than this share of the records is invalid")
        ->capture_default_str();
    cli.add_option("--patience", args.records.patience,
                   "--records: ... for this many rounds in a row")
        ->capture_default_str();
    // Every rank parses the same argv: a bad flag is the same error everywhere.
    bool help = false;
    nss::comm::run_on_all(*world, [&] {
      help = !nss::parse_tool_arguments(cli, argc, argv, "nss_generate", kUsage);
      if (help) return;
      check_modes(args, cli);
      args.records.batch_size = args.request.batch_size;
      args.records.max_new_tokens = args.request.max_new_tokens;
      args.records.sampling = args.request.sampling;
    });
    if (help) return nss::ExitCode::kOk;

    std::optional<nss::OutputDirectory> records_dir;
    std::optional<nss::log::DirectoryLock> lock;
    nss::comm::run_on_root(*world, 0, [&] {
      if (!args.output.empty()) claim_output(args, records_dir, lock);
    });
    torch::TensorOptions options;
    std::optional<nss::eval::InferenceModel> loaded;
    std::unique_ptr<generate::TextCodec> codec;
    nss::comm::run_on_all(*world, [&] {
      options = generate::generation_options(args.dtype, MPI_COMM_WORLD);
      loaded.emplace(
          nss::eval::load_inference_model(args.model, args.base, options, args.quantize));
      codec = open_codec(args, *loaded);
    });
    spdlog::info("[generate] {} on {} in {}", args.model, options.device().str(),
                 options.dtype() == torch::kBFloat16 ? "bf16" : "fp32");
    return args.records.wanted > 0
               ? write_synthetic_records(*world, args, *loaded, *codec, records_dir)
               : write_samples(*world, args, *loaded, *codec);
  });
}

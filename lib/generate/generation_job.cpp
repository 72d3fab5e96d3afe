#include "generate/generation_job.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "comm/agreement.h"
#include "comm/mpi_communicator.h"
#include "comm/stop_signal.h"
#include "core/fs.h"
#include "core/output_directory.h"
#include "core/output_location.h"
#include "data/input_file.h"
#include "data/token_dataset.h"
#include "generate/generation_device.h"
#include "generate/record_constraint.h"
#include "generate/records_task.h"
#include "log/directory_lock.h"

namespace nss::generate {
namespace {

constexpr log::DirectoryRole kRecordsDirectory{"records output directory", "--output",
                                               "--output DIR", ExitCode::kUsage};

// The "prompt" of each line of a JSONL file (scripts/render_chat_prompts.py
// turns {"messages": ...} lines into such lines).
std::vector<std::string> read_prompts(const std::string& path) {
  std::vector<std::string> prompts;
  data::for_each_jsonl_record(
      path,
      [&](const nlohmann::ordered_json& record, std::int64_t line) {
        if (!record.is_object() || !record.contains("prompt") || !record.at("prompt").is_string())
          throw DataError("generate",
                          data::where(path, line) + ": a prompt line needs a string \"prompt\"",
                          "render chat conversations first with scripts/render_chat_prompts.py");
        prompts.push_back(record.at("prompt").get<std::string>());
      },
      "--prompts");
  if (prompts.empty()) throw DataError("generate", path + " holds no prompt");
  return prompts;
}

OutputTarget samples_target(const GenerationJob& job) {
  return {job.output, "generate"};
}

std::unique_ptr<TextCodec> open_codec(const GenerationJob& job, const eval::InferenceModel& m) {
  const auto text = [&](const char* key) {
    return m.dataset.is_object() && m.dataset.value(key, nlohmann::json()).is_string()
               ? m.dataset.at(key).get<std::string>()
               : std::string();
  };
  return open_text_codec({job.tokenizer, text("tokenizer"), text("tokenizer_sha256"),
                          m.pretrained_dir, m.model.config().vocab_size});
}

// One JSON line per sample, in prompt and sample order.
ExitCode write_samples(comm::Communicator& world, const GenerationJob& job,
                       const eval::InferenceModel& m, const TextCodec& codec) {
  std::string listing;  // rank 0 reads the prompts once; every rank gets the same list
  comm::run_on_root(world, 0, [&] {
    listing = nlohmann::json(job.prompts.empty() ? std::vector<std::string>{job.prompt}
                                                 : read_prompts(job.prompts))
                  .dump();
  });
  comm::broadcast_text(world, listing, 0);
  const auto prompts = nlohmann::json::parse(listing).get<std::vector<std::string>>();
  const auto count = static_cast<std::int64_t>(prompts.size());
  GenerationRequest request = job.request;
  request.first_prompt_index = count * world.rank() / world.size();
  const std::int64_t last = count * (world.rank() + 1) / world.size();
  for (std::int64_t i = request.first_prompt_index; i < last; ++i)
    request.prompts.push_back(codec.encode_prompt(prompts[static_cast<std::size_t>(i)]));
  spdlog::info("[generate] {} prompts x {} samples on {} ranks with {}", count, request.num_samples,
               world.size(), codec.description());

  std::int64_t generated = 0;
  const auto start = std::chrono::steady_clock::now();
  std::string lines;
  const bool alone = world.size() == 1 && job.output.empty();
  comm::run_on_all(world, [&] {
    generate(m.model, codec, request, [&](const GeneratedSample& s) {
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
  if (alone) return ExitCode::kOk;
  const auto shares = comm::all_gather_text(world, lines);
  comm::run_on_root(world, 0, [&] {
    std::string all;
    for (const auto& share : shares) all += share;
    if (job.output.empty()) {
      std::fputs(all.c_str(), stdout);
      std::fflush(stdout);
    } else {
      write_output_file(samples_target(job), all);
    }
  });
  return ExitCode::kOk;
}

// The constraint of --constrain schema: the schema's automaton over what
// each of the codec's tokens adds to a completion; the EOS of the training
// data (and the model's) ends one.
std::unique_ptr<RecordConstraint> record_constraint(const RecordsTask& task, const TextCodec& codec,
                                                    bool categories) {
  VocabularyBytes vocabulary{codec.token_bytes(true), codec.token_bytes(false)};
  std::vector<std::int32_t> ends;
  for (const std::int64_t id : codec.end_ids())
    if (id >= 0 && id < static_cast<std::int64_t>(vocabulary.after.size()))
      ends.push_back(static_cast<std::int32_t>(id));
  return std::make_unique<RecordConstraint>(task.schema, task.grouped, categories,
                                            std::move(vocabulary), std::move(ends));
}

// The files of --records in `dir`: synthetic.csv, synthetic.jsonl,
// invalid.jsonl and generation.json (the counts; "complete" false when the
// early stop ended it).
// What bounded each column's values under --constrain schema: the
// longest value preparation saw (data-dependent, like the schema itself), or
// the defaults for data prepared before they were recorded.
nlohmann::json value_limits(const RecordSchema& schema) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& column : schema.columns)
    out[column.name] = {{"max_chars", column.limits.string_chars},
                        {"max_integer_digits", column.limits.integer_digits},
                        {"max_fraction_digits", column.limits.fraction_digits},
                        {"max_exponent_digits", column.limits.exponent_digits},
                        {"digit_strings", column.digit_strings},
                        {"missing_values", column.missing_values},
                        {"from", column.limits_recorded ? "training table" : "defaults"}};
  return out;
}

void write_records(OutputDirectory& dir, const RecordsOutcome& outcome, const GenerationJob& job,
                   const RecordConstraint* constraint, const RecordSchema& schema) {
  const RecordCounts& t = outcome.records.totals();
  dir.keep();
  write_output_file(dir.file("synthetic.csv"), outcome.records.csv());
  write_output_file(dir.file("synthetic.jsonl"), outcome.records.jsonl());
  write_output_file(dir.file("invalid.jsonl"), outcome.records.invalid_jsonl());
  nlohmann::json summary{{"model", job.model.path},
                         {"records_wanted", job.records.wanted},
                         {"valid_records", t.valid},
                         {"invalid_records", t.invalid},
                         {"cut_off_records", outcome.records.cut_off()},
                         {"valid_fraction", outcome.records.valid_fraction()},
                         {"samples", outcome.records.samples()},
                         {"seconds", outcome.seconds},
                         {"valid_records_per_second", t.valid / std::max(outcome.seconds, 1e-9)},
                         {"constrain", job.records.constrain},
                         {"mask_seconds", constraint ? constraint->mask_seconds() : 0.0},
                         {"complete", outcome.records.done()}};
  if (constraint) summary["value_limits"] = value_limits(schema);
  if (job.records.categories)
    summary["categories"] = job.records.allow_uncovered
                                ? "the training table's, outside the DP guarantee (allowed)"
                                : "the training table's";
  write_output_file(dir.file("generation.json"), summary.dump(2) + "\n");
}

// What a records run decodes: the task rebuilt from the model's (or
// --records-data's) dataset record, the training prompt's ids, and the
// request with its constraint.
struct RecordsSetup {
  RecordsTask task;
  std::vector<std::int64_t> prompt;
  RecordsRequest request;
  std::unique_ptr<RecordConstraint> constraint;
};

RecordsSetup records_setup(const GenerationJob& job, const eval::InferenceModel& m,
                           TextCodec& codec) {
  RecordsSetup setup{records_task(m.dataset, job.model.path), {}, job.records, nullptr};
  const RecordsTask& task = setup.task;
  // The ids every training example began with: [BOS] prompt, tokenised alone.
  if (task.bos_token_id) setup.prompt.push_back(*task.bos_token_id);
  const auto text = task.bos_token_id ? codec.encode_plain(task.prompt)
                                      : codec.encode_prompt(task.prompt);  // older steps
  setup.prompt.insert(setup.prompt.end(), text.begin(), text.end());
  if (task.eos_token_id) codec.also_end_at(*task.eos_token_id);
  RecordsRequest& request = setup.request;
  if (request.constrain != "schema") return setup;
  check_categories_privacy(request, !m.privacy.is_null());
  setup.constraint = record_constraint(task, codec, request.categories);
  request.constraint = setup.constraint.get();
  if (const std::int64_t fewest = setup.constraint->minimum_tokens();
      request.max_new_tokens < fewest)
    throw UsageError(
        "generate",
        fmt::format("{} {} cannot hold a record of this table: the shortest takes at "
                    "least {} tokens with {}",
                    job.names.max_new_tokens, request.max_new_tokens, fewest, codec.description()),
        fmt::format("give {} {} or more", job.names.max_new_tokens, fewest));
  return setup;
}

ExitCode write_synthetic_records(comm::Communicator& world, const GenerationJob& job,
                                 const eval::InferenceModel& m, TextCodec& codec,
                                 std::optional<OutputDirectory>& dir) {
  // Every rank reaches the same verdict: one message, the same exit code.
  RecordsSetup setup;
  comm::run_on_all(world, [&] { setup = records_setup(job, m, codec); });
  const RecordsTask& task = setup.task;
  const RecordConstraint* constraint = setup.constraint.get();
  // From here a signal ends the run between rounds with the records so far on disk.
  comm::install_stop_signal_handlers();
  spdlog::info(
      "[records] {} valid records of {} columns wanted, {} samples per rank and round "
      "on {} ranks, with {}",
      job.records.wanted, task.schema.columns.size(), job.records.batch_size, world.size(),
      codec.description());
  const RecordsOutcome outcome =
      generate_records(world, m.model, codec, setup.prompt, task.schema, setup.request);
  comm::run_on_root(world, 0, [&] {
    write_records(*dir, outcome, job, constraint, task.schema);
    const RecordCounts& t = outcome.records.totals();
    const SettingNames& n = job.names;
    const std::string rate =
        fmt::format("{:.1f}% of the {} records judged were valid, {} cut off at {} ({} samples)",
                    100.0 * outcome.records.valid_fraction(), t.valid + t.invalid,
                    outcome.records.cut_off(), n.max_new_tokens, outcome.records.samples());
    if (outcome.signal != comm::StopRequest::kNone)
      return spdlog::warn(
          "[records] {} received: wrote the {} valid records so far to {} ({}); "
          "generation.json says complete: false",
          comm::describe(outcome.signal), t.valid, job.output, rate);
    if (outcome.stopped_early)
      throw DataError(
          "generate",
          fmt::format("stopped early: only {}; {} of {} records wanted were written to {}", rate,
                      t.valid, job.records.wanted, job.output),
          fmt::format("the invalid fraction stayed above {} {} for {} {} round(s): read "
                      "{}/invalid.jsonl for the reasons; train longer{}, raise {} if records are "
                      "cut off, or lower {}",
                      n.invalid_fraction_threshold, job.records.invalid_fraction_threshold,
                      n.patience, job.records.patience, job.output,
                      n.training_steps.empty() ? "" : " (" + n.training_steps + ")",
                      n.max_new_tokens, n.temperature));
    spdlog::info(
        "[records] wrote {} valid records to {}/synthetic.csv (+ synthetic.jsonl, "
        "invalid.jsonl, generation.json); {}; {:.1f} s, {:.2f} valid records/s",
        t.valid, job.output, rate, outcome.seconds, t.valid / std::max(outcome.seconds, 1e-9));
  });
  return outcome.signal == comm::StopRequest::kNone ? ExitCode::kOk
                                                    : comm::exit_code_for(outcome.signal);
}

// A run that a signal ended (generation.json says complete: false) is run
// again into its directory, as a requeued job is: its files are replaced.
// A complete run's records are never overwritten.
ExistingOutput records_policy(const std::string& dir) {
  const std::string summary = dir + "/generation.json";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(summary, ec)) return ExistingOutput::kRefuse;
  const auto json = nlohmann::json::parse(read_text_file(summary, "generate"), nullptr, false);
  const bool stopped = json.is_object() && json.value("complete", nlohmann::json()).is_boolean() &&
                       !json.at("complete").get<bool>();
  return stopped ? ExistingOutput::kReplaceFile : ExistingOutput::kRefuse;
}

// Where the output goes, claimed before the model loads: the records
// directory (locked against a second job), or the JSONL file's path.
void claim_output(const GenerationJob& job, std::optional<OutputDirectory>& dir,
                  std::optional<log::DirectoryLock>& lock) {
  if (job.records.wanted == 0) return check_output_path(samples_target(job));
  dir.emplace(OutputTarget{job.output, "generate", "--output", records_policy(job.output)},
              kRecordsDirectory.what,
              std::vector<std::string>{"synthetic.csv", "synthetic.jsonl", "invalid.jsonl",
                                       "generation.json"});
  lock.emplace(job.output, kRecordsDirectory);
}

// --records-data: the dataset record a step would hold, read from the token
// file preparation wrote, for a model that holds none.
void adopt_records_data(const GenerationJob& job, eval::InferenceModel& m) {
  if (!m.dataset.is_null())
    throw UsageError("generate",
                     job.model.path +
                         " records the data it was trained on: --records-data would "
                         "replace that record",
                     "drop --records-data: the step's own prompt and schema are used");
  try {
    m.dataset = data::describe_preparation(data::TokenDataset::open(job.records_data)->metadata());
  } catch (const DataError& e) {
    throw DataError(e.component(), "--records-data: " + e.message(),
                    "name the HDF5 token file nss_prepare_data --format records wrote for the "
                    "table the model was fine-tuned on");
  }
  const auto format = m.dataset.find("format");
  const std::string kind =
      format != m.dataset.end() && format->is_string() ? format->get<std::string>() : "";
  if (kind != "records")
    throw UsageError("generate",
                     "--records-data " + job.records_data + " holds " +
                         (kind.empty() ? "no record of its preparation" : "'" + kind + "' data") +
                         ", not records data",
                     "prepare the table with nss_prepare_data --format records and name that file");
}

}  // namespace

void check_generation_job(GenerationJob& job) {
  const int modes =
      (job.prompt.empty() ? 0 : 1) + (job.prompts.empty() ? 0 : 1) + (job.records_given ? 1 : 0);
  if (modes != 1)
    throw UsageError("cli", "give exactly one of --prompt, --prompts and --records",
                     "--prompt TEXT, --prompts FILE.jsonl, or --records N --output DIR");
  job.records.batch_size = job.request.batch_size;
  job.records.max_new_tokens = job.request.max_new_tokens;
  job.records.sampling = job.request.sampling;
  if (!job.records_given) {
    if (!job.records_data.empty())
      throw UsageError("cli", "--records-data applies to --records only",
                       "drop it, or give --records N --output DIR");
    if (job.constrain_given)
      throw UsageError("cli", "--constrain applies to --records only",
                       "drop it: prompts are sampled as the model writes");
    return;
  }
  for (const auto& [given, flag] :
       {std::pair{job.num_samples_given, "--num-samples"}, std::pair{job.stop_given, "--stop"}})
    if (given)
      throw UsageError("cli", std::string(flag) + " does not apply to --records",
                       "--records samples the training prompt until N valid records");
  if (job.output.empty())
    throw UsageError("cli", "--records needs --output DIR",
                     "synthetic.csv, synthetic.jsonl, invalid.jsonl and generation.json "
                     "are written there");
  check_records_request(job.records);
}

ExitCode run_generation(comm::Communicator& world, MPI_Comm mpi_world, const GenerationJob& job) {
  std::optional<OutputDirectory> records_dir;
  std::optional<log::DirectoryLock> lock;
  comm::run_on_root(world, 0, [&] {
    if (!job.output.empty()) claim_output(job, records_dir, lock);
  });
  torch::TensorOptions options;
  std::optional<eval::InferenceModel> loaded;
  std::unique_ptr<TextCodec> codec;
  comm::run_on_all(world, [&] {
    options = generation_options(job.dtype, mpi_world);
    loaded.emplace(eval::load_inference_model(job.model, options));
    if (!job.records_data.empty()) adopt_records_data(job, *loaded);
    codec = open_codec(job, *loaded);
  });
  spdlog::info("[generate] {} on {} in {}", job.model.path, options.device().str(),
               options.dtype() == torch::kBFloat16 ? "bf16" : "fp32");
  return job.records.wanted > 0 ? write_synthetic_records(world, job, *loaded, *codec, records_dir)
                                : write_samples(world, job, *loaded, *codec);
}

}  // namespace nss::generate

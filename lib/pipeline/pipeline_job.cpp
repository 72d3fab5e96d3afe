#include "pipeline/pipeline_job.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <sys/stat.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "comm/agreement.h"
#include "comm/stop_signal.h"
#include "config/load.h"
#include "core/fs.h"
#include "core/host_and_time.h"
#include "core/output_location.h"
#include "core/sha256.h"
#include "log/directory_lock.h"
#include "log/logger.h"
#include "pipeline/pipeline_config.h"
#include "pipeline/stages.h"

namespace nss::pipeline {
namespace {

using Clock = std::chrono::steady_clock;

// What rank 0 holds for the job's life.
struct RunDirectory {
  std::optional<log::DirectoryLock> lock;
  std::optional<Ledger> ledger;
};

bool outputs_unchanged(const StageRecord& record) {
  for (const auto& [name, file] : record.outputs) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file.path, ec)) return false;
    if (sha256_file_hex(file.path) != file.sha256) return false;
  }
  return true;
}

enum class Decision { kRun, kSkip, kOff };

Decision decide(Stage& stage, const StageContext& context, StageRecord& record,
                std::map<std::string, std::string>& inputs) {
  if (!stage.enabled(context)) return Decision::kOff;
  inputs = stage.inputs(context);
  if (record.status == StageStatus::kCompleted && record.inputs == inputs &&
      outputs_unchanged(record))
    return Decision::kSkip;
  return Decision::kRun;
}

void record_start(Ledger& ledger, StageRecord& record, std::map<std::string, std::string> inputs) {
  record.status = StageStatus::kRunning;
  record.inputs = std::move(inputs);
  record.outputs.clear();
  record.facts = nlohmann::ordered_json::object();
  record.started = utc_stamp();
  record.ended.clear();
  record.exit_code = 0;
  record.message.clear();
  ++record.runs;
  ledger.save();
}

void record_end(Ledger& ledger, StageRecord& record, StageStatus status, double seconds) {
  record.status = status;
  record.ended = utc_stamp();
  record.seconds = seconds;
  record.total_seconds += seconds;
  ledger.save();
}

// Runs one stage where it runs, recording its end (or its failure) on rank 0.
ExitCode execute(Stage& stage, const StageContext& context, RunDirectory& run) {
  StageRecord* record = run.ledger ? &run.ledger->stage(stage.name()) : nullptr;
  const auto start = Clock::now();
  const auto seconds = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  // The stage's own error is the one reported, even when the ledger cannot
  // take its record (a full disk).
  const auto failed = [&](const Error& e) {
    if (record == nullptr) return;
    record->exit_code = static_cast<int>(e.code());
    record->message = e.message();
    try {
      record_end(*run.ledger, *record, StageStatus::kFailed, seconds());
    } catch (const Error& unrecorded) {
      spdlog::warn("[pipeline] could not record the failure of {}: {}", stage.name(),
                   unrecorded.message());
    }
  };
  StageResult result;
  try {
    if (stage.on_every_rank()) {
      result = stage.run(context);
    } else {
      comm::run_on_root(context.world, 0, [&] {
        try {
          result = stage.run(context);
        } catch (const Error& e) {
          failed(e);
          throw;
        }
      });
    }
  } catch (const comm::AgreedError& e) {
    if (stage.on_every_rank()) failed(e);
    throw;
  } catch (const Error& e) {
    failed(e);
    throw;
  }
  // Every rank leaves with the same error when the ledger cannot be written.
  comm::run_on_root(context.world, 0, [&] {
    record->outputs = result.outputs;
    record->facts = result.facts;
    record->exit_code = static_cast<int>(result.code);
    if (result.code != ExitCode::kOk)
      record->message = fmt::format("stopped by a signal (exit {}); the next start runs it again",
                                    static_cast<int>(result.code));
    record_end(*run.ledger, *record,
               result.code == ExitCode::kOk ? StageStatus::kCompleted : StageStatus::kInterrupted,
               seconds());
  });
  return result.code;
}

const char* decision_name(Decision decision) {
  switch (decision) {
    case Decision::kRun:
      return "run";
    case Decision::kSkip:
      return "skip";
    case Decision::kOff:
      return "off";
  }
  return "?";
}

// Rank 0 decides (and records) whether the stage runs; every rank learns it.
Decision agree_on_decision(Stage& stage, const StageContext& context, RunDirectory& run) {
  std::string text;
  comm::run_on_root(context.world, 0, [&] {
    StageRecord& record = run.ledger->stage(stage.name());
    std::map<std::string, std::string> inputs;
    const Decision decision = decide(stage, context, record, inputs);
    text = decision_name(decision);
    if (decision == Decision::kRun) {
      stage.check_can_run(context);
      spdlog::info("[pipeline] {}: {}", stage.name(),
                   record.runs == 0
                       ? "starting"
                       : fmt::format("running again (last: {})", status_name(record.status)));
      record_start(*run.ledger, record, std::move(inputs));
    } else if (decision == Decision::kSkip) {
      spdlog::info("[pipeline] {}: completed {} on the same inputs, outputs unchanged: skipped",
                   stage.name(), record.ended);
    } else {
      spdlog::info("[pipeline] {}: off", stage.name());
      if (record.status != StageStatus::kOff) {
        record = StageRecord{};
        record.name = stage.name();
        record.status = StageStatus::kOff;
        run.ledger->save();
      }
    }
  });
  comm::broadcast_text(context.world, text, 0);
  if (text == "run") return Decision::kRun;
  return text == "skip" ? Decision::kSkip : Decision::kOff;
}

// The table must be a file before anything is claimed.
void require_table(const std::string& table) {
  struct stat info {};
  if (::stat(table.c_str(), &info) != 0)
    throw DataError("pipeline", "cannot read the table " + table + ": " + std::strerror(errno),
                    "give the CSV file to synthesize: nss_synthesize TABLE.csv");
  if (!S_ISREG(info.st_mode))
    throw DataError(
        "pipeline",
        "the table " + table + " is " + file_kind(info.st_mode) + ", not a regular file",
        "give the CSV file to synthesize: nss_synthesize TABLE.csv");
}

// Rank 0 resolves the configuration and writes the fine-tune's part of it;
// every rank receives the same text.
ResolvedPipeline agree_on_configuration(comm::Communicator& world,
                                        const SynthesizeOptions& options) {
  ResolvedPipeline resolved;
  std::string text;
  comm::run_on_root(world, 0, [&] {
    resolved = load_pipeline_config(options);
    require_table(options.table);
    text = config::to_yaml(resolved.config, /*with_comments=*/false);
  });
  comm::broadcast_text(world, text, 0);
  comm::broadcast_text(world, resolved.run_dir, 0);
  resolved.config = config::parse_config_text(text, "resolved configuration from rank 0");
  return resolved;
}

// Rank 0 locks the run directory (a second job on it is refused) and opens
// the ledger; every rank logs into <run>/logs.
void claim_run_directory(comm::Communicator& world, const RunPaths& paths,
                         const std::vector<std::unique_ptr<Stage>>& stages, RunDirectory& run) {
  comm::run_on_root(world, 0, [&] {
    run.lock.emplace(paths.root, log::kRunDirectory);
    create_directories(paths.logs(), "pipeline");
    std::vector<std::string> names;
    for (const auto& stage : stages) names.push_back(stage->name());
    run.ledger = Ledger::open(paths.ledger(), names);
    std::error_code ec;
    if (!std::filesystem::exists(paths.ledger(), ec)) run.ledger->save();
  });
}

std::string every_host(comm::Communicator& world) {
  std::string hosts;
  for (const auto& host : comm::all_gather_text(world, host_name())) hosts += host + "\n";
  return hosts;
}

// The last lines: where the records and the report are, and the scores.
void report_outcome(const StageContext& context, Ledger& ledger) {
  const RunPaths& paths = context.paths;
  const auto& generate = ledger.stage("generate");
  const auto& evaluate = ledger.stage("evaluate");
  auto& summary = ledger.summary();
  summary = nlohmann::ordered_json::object();
  summary["table"] = context.options.table;
  summary["config"] = context.options.config_path;
  summary["ranks"] = context.world.size();
  summary["synthetic_table"] = paths.synthetic_table();
  summary["valid_records"] = generate.facts.value("valid_records", nlohmann::ordered_json());
  double seconds = 0;
  for (const auto& stage : ledger.stages()) seconds += stage.total_seconds;
  summary["seconds"] = seconds;
  std::string scores;
  if (evaluate.status == StageStatus::kCompleted) {
    summary["report"] = evaluate.outputs.at("report").path;
    summary["quality"] = evaluate.facts.at("quality");
    summary["privacy"] = evaluate.facts.at("privacy");
    const auto shown = [](const nlohmann::ordered_json& s) {
      return s.is_null() ? std::string("unavailable")
                         : fmt::format("{:.1f} ({})", s.at("score").get<double>(),
                                       s.at("grade").get<std::string>());
    };
    scores = fmt::format("; SQS {}, DPS {}; report {}", shown(evaluate.facts.at("quality")),
                         shown(evaluate.facts.at("privacy")), evaluate.outputs.at("report").path);
  }
  ledger.save();
  std::printf("nss_synthesize: %s valid records in %s%s\n",
              summary.at("valid_records").dump().c_str(), paths.synthetic_table().c_str(),
              scores.c_str());
  std::fflush(stdout);
}

// A signal asks the job to stop: it does so between stages, with the code
// the signal asks for, once what is done is recorded.
std::optional<ExitCode> stop_between_stages(comm::Communicator& world, RunDirectory& run,
                                            const Stage& done, const Stage* next) {
  const comm::StopRequest request = comm::agree_on_stop_request(world);
  if (request == comm::StopRequest::kNone || next == nullptr) return std::nullopt;
  comm::run_on_root(world, 0, [&] {
    spdlog::warn("[pipeline] {} received: stopping after {}; the next start continues with {}",
                 comm::describe(request), done.name(), next->name());
    run.ledger->summary()["stopped"] = {{"after", done.name()},
                                        {"signal", comm::describe(request)}};
    run.ledger->save();
  });
  return comm::exit_code_for(request);
}

}  // namespace

std::vector<std::unique_ptr<Stage>> make_stages() {
  std::vector<std::unique_ptr<Stage>> stages;
  stages.push_back(make_prepare_stage());
  stages.push_back(make_preflight_stage());
  stages.push_back(make_training_stage());
  stages.push_back(make_sampling_stage());
  stages.push_back(make_evaluation_stage());
  return stages;
}

ExitCode run_pipeline(comm::Communicator& world, MPI_Comm mpi_world,
                      const SynthesizeOptions& options, const PipelineHooks& hooks) {
  comm::install_stop_signal_handlers();
  const ResolvedPipeline resolved = agree_on_configuration(world, options);
  if (options.print_config) {
    if (world.rank() == 0) std::fputs(config::to_yaml(resolved.config, true).c_str(), stdout);
    return ExitCode::kOk;
  }
  log::set_level(config::choice_name(resolved.config.logging.level));
  const RunPaths paths{resolved.run_dir};
  const auto stages = make_stages();
  RunDirectory run;
  claim_run_directory(world, paths, stages, run);
  comm::run_on_all(world, [&] { log::attach_rank_file(paths.logs(), world.rank()); });
  const StageContext context{world,
                             mpi_world,
                             options,
                             resolved.config,
                             paths,
                             paths.root + "/training.yaml",
                             resolved.config.checkpoint.dir,
                             every_host(world),
                             run.ledger ? &*run.ledger : nullptr};
  spdlog::info("nss_synthesize: {} -> {} on {} ranks", options.table, paths.root, world.size());
  for (std::size_t i = 0; i < stages.size(); ++i) {
    Stage& stage = *stages[i];
    const Decision decision = agree_on_decision(stage, context, run);
    if (decision == Decision::kRun) {
      const ExitCode code = execute(stage, context, run);
      if (code != ExitCode::kOk) return code;
    }
    if (decision != Decision::kOff) comm::run_on_root(world, 0, [&] { stage.publish(context); });
    if (hooks.after_stage) hooks.after_stage(stage.name());
    const Stage* next = i + 1 < stages.size() ? stages[i + 1].get() : nullptr;
    if (const auto code = stop_between_stages(world, run, stage, next)) return *code;
  }
  comm::run_on_root(world, 0, [&] { report_outcome(context, *run.ledger); });
  return ExitCode::kOk;
}

}  // namespace nss::pipeline

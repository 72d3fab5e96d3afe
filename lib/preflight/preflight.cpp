#include "preflight/preflight.h"

#include <chrono>
#include <cstdio>
#include <exception>

#include <spdlog/spdlog.h>

#include "comm/agreement.h"
#include "core/failure.h"
#include "log/logger.h"
#include "preflight/checkpoint_checks.h"
#include "preflight/dataloader_memory.h"
#include "preflight/layout_checks.h"
#include "preflight/memory_checks.h"
#include "preflight/parallel_layout_check.h"
#include "preflight/report_output.h"
#include "preflight/token_data_checks.h"
#include "preflight/verdict_channel.h"

namespace nss::preflight {
namespace {

constexpr int kRoot = 0;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Anything that goes wrong on rank 0 still becomes a verdict, so the other
// ranks learn it at once instead of waiting out verdict_timeout_s.
Verdict verdict_from_error(const std::exception_ptr& error) {
  const Failure failure = classify(error);
  Verdict verdict;
  verdict.go = false;
  verdict.code = failure.code;
  verdict.reason = failure.unexpected
                       ? "no-go: unexpected error in the preflight: " + failure.message
                       : "no-go: [" + failure.component + "] " + failure.message +
                             (failure.out_of_memory ? " (rank 0, during the preflight)" : "");
  verdict.hint = failure.hint;
  return verdict;
}

Verdict decide_on_root(const PreflightInputs& inputs, const PreflightPlan& plan,
                       std::vector<RankFacts> ranks, int world_size,
                       std::chrono::steady_clock::time_point start) {
  const PreflightContext context{inputs.config,
                                 world_size,
                                 inputs.device,
                                 std::move(ranks),
                                 inputs.baseline_resident_bytes,
                                 packed_row_spans(inputs.config)};
  const PreflightReport report = build_report(context, plan);
  const Verdict verdict = report.verdict(inputs.config.preflight.fail_on_warning);
  const double duration = seconds_since(start);
  write_preflight_json(inputs.run_dir,
                       report_to_json(report, verdict, world_size, duration, context.ranks));
  spdlog::info("[preflight] {} checks in {:.2f} s; report in {}/preflight.json",
               report.checks().size(), duration, inputs.run_dir);
  for (const auto& line : format_report_table(report, verdict))
    spdlog::info("[preflight] {}", line);
  return verdict;
}

[[noreturn]] void end_job_without_verdict(const PreflightInputs& inputs) {
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%g", inputs.config.preflight.verdict_timeout_s);
  spdlog::error(
      "[preflight] rank 0 did not deliver the preflight verdict within "
      "preflight.verdict_timeout_s = {} s; its log is {}; ending the job with exit code 3",
      seconds, log::rank_log_path(inputs.run_dir + "/logs", kRoot));
  log::flush();
  comm::abort_job(ExitCode::kResources);
}

}  // namespace

PreflightReport build_report(const PreflightContext& context, const PreflightPlan& plan) {
  PreflightReport report(device_name(context.device));
  report.run_guarded("layout.batch",
                     [&] { report.add(check_batch_layout(context.config, context.world_size)); });
  report.run_guarded("layout.devices", [&] { report.add(check_devices(context)); });
  report.run_guarded("layout.dtype", [&] { report.add(check_dtype(context)); });
  report.run_guarded("data.open", [&] {
    for (auto& check : check_datasets_open(context)) report.add(std::move(check));
  });
  check_dataset_formats(context, plan.validate_dataset, report);
  report.run_guarded("checkpoint.directory",
                     [&] { report.add(check_checkpoint_directory(context)); });
  report.run_guarded("checkpoint.space", [&] { report.add(check_checkpoint_space(context)); });
  report.run_guarded("checkpoint.resume", [&] { report.add(check_checkpoint_resume(context)); });
  report.run_guarded("dataloader.host_memory",
                     [&] { report.add(check_dataloader_host_memory(context, report)); });
  report.run_guarded("memory.pinned_host", [&] {  // only with parallel.offload_optimizer
    if (auto check = check_pinned_host_memory(context)) report.add(std::move(*check));
  });
  for (const auto& stage : plan.stages)
    report.run_guarded(stage.id, [&] { stage.run(report, context); });
  // Last: the layout advice uses the synthetic step's time when a stage measured it.
  report.run_guarded("layout.parallel",
                     [&] { report.add(check_parallel_layout(context, report)); });
  return report;
}

Verdict run_preflight(comm::Communicator& comm, MPI_Comm world, const PreflightInputs& inputs,
                      const PreflightPlan& plan) {
  const auto start = std::chrono::steady_clock::now();
  VerdictChannel channel(world, kRoot);

  FactsRequest request;
  request.device = inputs.device;
  request.timeout_s = inputs.config.preflight.first_batch_timeout_s;
  for (const auto& dataset : configured_datasets(inputs.config))
    request.datasets.emplace_back(dataset.role, dataset.path);
  request.checkpoint_dir = inputs.config.checkpoint.dir;
  // Every rank reads its slices of the base: each node must see the same directory.
  if (!inputs.config.model.from_pretrained.empty())
    request.model_config = inputs.config.model.from_pretrained + "/config.json";
  const RankFacts mine = collect_rank_facts(inputs.layout, request);
  std::vector<RankFacts> ranks = exchange_rank_facts(comm, mine);

  Verdict verdict;
  if (comm.rank() == kRoot) {
    try {
      verdict = decide_on_root(inputs, plan, std::move(ranks), comm.size(), start);
    } catch (...) {
      verdict = verdict_from_error(std::current_exception());
      spdlog::error("[preflight] {}", verdict.reason);
    }
    if (plan.before_verdict) plan.before_verdict();
    channel.send(verdict);
  } else {
    spdlog::info("[preflight] facts sent; waiting for rank 0's verdict (at most {} s)",
                 inputs.config.preflight.verdict_timeout_s);
    const auto received = channel.receive(inputs.config.preflight.verdict_timeout_s);
    if (!received) end_job_without_verdict(inputs);
    verdict = *received;
  }

  if (!verdict.go) {
    // Every rank's log carries the verdict and what to change.
    spdlog::info("[preflight] {}", verdict.reason);
    if (!verdict.hint.empty()) spdlog::info("[preflight] hint: {}", verdict.hint);
    throw comm::AgreedError(verdict.code, "preflight", verdict.reason, verdict.hint);
  }
  spdlog::info("[preflight] {} ({:.2f} s)", verdict.reason, seconds_since(start));
  return verdict;
}

}  // namespace nss::preflight

#include "preflight/data_checks.h"

#include <algorithm>
#include <cstdio>

#include "core/deadline.h"
#include "core/units.h"

namespace nss::preflight {
namespace {

const PathProbe* probe_of(const RankFacts& facts, const std::string& role) {
  for (const auto& access : facts.datasets)
    if (access.role == role) return &access.probe;
  return nullptr;
}

Check check_one_dataset_opens(const PreflightContext& context, const DatasetRef& dataset) {
  const std::string id = dataset.role == "train" ? "data.open" : dataset.role + ".open";
  const RankFacts* first_failure = nullptr;
  int failures = 0;
  double slowest = 0;
  for (const auto& facts : context.ranks) {
    const PathProbe* probe = probe_of(facts, dataset.role);
    if (!probe)
      return Check::fail(id, ExitCode::kInternal,
                         rank_label(facts) + " did not report on " + dataset.key,
                         "this is a bug in nss_hpc; please report it with the log");
    slowest = std::max(slowest, probe->seconds);
    if (!probe->readable) {
      ++failures;
      if (!first_failure) first_failure = &facts;
    }
  }
  const double deadline = context.config.preflight.first_batch_timeout_s;
  if (first_failure) {
    const PathProbe& probe = *probe_of(*first_failure, dataset.role);
    std::string message =
        rank_label(*first_failure) + ": " + dataset.key + " " + dataset.path + " " + probe.problem;
    if (failures > 1)
      message += " (and on " + std::to_string(failures - 1) + " more rank" +
                 (failures > 2 ? "s" : "") + ")";
    return Check::fail(id, ExitCode::kData, message, probe.hint)
        .with_numbers(std::nullopt, slowest, deadline, "s");
  }
  const PathProbe& rank0 = *probe_of(context.ranks.front(), dataset.role);
  return Check::pass(id, ExitCode::kData,
                     dataset.key + " " + dataset.path + " (" + format_bytes(rank0.size_bytes) +
                         ") opened on all " + std::to_string(context.ranks.size()) +
                         " ranks, slowest in " + format_seconds(slowest))
      .with_numbers(std::nullopt, slowest, deadline, "s");
}

}  // namespace

bool validation_enabled(const config::Config& config) {
  return !config.eval.path.empty() && config.eval.interval_steps > 0;
}

std::vector<DatasetRef> configured_datasets(const config::Config& config) {
  std::vector<DatasetRef> datasets = {{"train", "data.path", config.data.path}};
  if (validation_enabled(config)) datasets.push_back({"eval", "eval.path", config.eval.path});
  return datasets;
}

DatasetValidator hdf5_signature_validator() {
  return [](const DatasetRef& dataset, const PathProbe& probe) -> std::vector<Check> {
    const std::string id = dataset.role == "train" ? "data.format" : dataset.role + ".format";
    const std::string size = format_bytes(probe.size_bytes);
    if (!probe.hdf5_signature)
      return {Check::fail(id, ExitCode::kData,
                          dataset.key + " " + dataset.path + " is not an HDF5 file (" + size +
                              ", no HDF5 signature)",
                          "convert the data with nss_prepare_data (text, JSONL or CSV -> token "
                          "HDF5)")};
    return {Check::pass(id, ExitCode::kData,
                        dataset.key + " " + dataset.path + " is an HDF5 file (" + size + ")")};
  };
}

std::vector<Check> check_datasets_open(const PreflightContext& context) {
  std::vector<Check> checks;
  for (const auto& dataset : configured_datasets(context.config))
    checks.push_back(check_one_dataset_opens(context, dataset));
  if (!validation_enabled(context.config))
    checks.push_back(Check::skipped("eval.open", ExitCode::kData,
                                    "validation is off (eval.path empty or eval.interval_steps 0): "
                                    "no validation set to check"));
  return checks;
}

void check_dataset_formats(const PreflightContext& context, const DatasetValidator& validator,
                           PreflightReport& report) {
  const double deadline = context.config.preflight.first_batch_timeout_s;
  for (const auto& dataset : configured_datasets(context.config)) {
    const std::string id = dataset.role == "train" ? "data.format" : dataset.role + ".format";
    const std::string open_id = dataset.role == "train" ? "data.open" : dataset.role + ".open";
    const PathProbe* probe = probe_of(context.ranks.front(), dataset.role);
    if (!report.usable(open_id) || !probe || !probe->readable) {
      report.add(Check::skipped(id, ExitCode::kData,
                                dataset.key + " did not open on every rank (see " + open_id + ")"));
      continue;
    }
    report.run_guarded(id, [&] {
      const auto checks = call_with_deadline(
          deadline, [validator, dataset, probe = *probe] { return validator(dataset, probe); });
      if (!checks) {
        char seconds[32];
        std::snprintf(seconds, sizeof seconds, "%g", deadline);
        report.add(Check::fail(id, ExitCode::kData,
                               "validating " + dataset.key + " " + dataset.path +
                                   " did not finish within " + seconds +
                                   " s (preflight.first_batch_timeout_s)",
                               "check the file system holding the dataset, or raise "
                               "preflight.first_batch_timeout_s if it is only slow")
                       .with_numbers(std::nullopt, std::nullopt, deadline, "s"));
        return;
      }
      for (const auto& check : *checks) report.add(check);
    });
  }
}

}  // namespace nss::preflight

#include "preflight/report_output.h"

#include <algorithm>
#include <cstdio>

#include "core/fs.h"
#include "core/units.h"

namespace nss::preflight {
namespace {

template <class T>
nlohmann::ordered_json optional_json(const std::optional<T>& value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json check_to_json(const Check& check) {
  return {{"id", check.id},
          {"status", status_name(check.status)},
          {"code", static_cast<int>(check.code)},
          {"message", check.message},
          {"predicted", optional_json(check.predicted)},
          {"measured", optional_json(check.measured)},
          {"threshold", optional_json(check.threshold)},
          {"unit", check.unit.empty() ? nlohmann::ordered_json(nullptr)
                                      : nlohmann::ordered_json(check.unit)},
          {"remediation", check.remediation}};
}

std::string number_text(const std::optional<double>& value, const std::string& unit) {
  if (!value) return "-";
  if (unit == "bytes") return format_bytes(*value);
  char text[48];
  std::snprintf(text, sizeof text, "%.4g%s%s", *value, unit.empty() ? "" : " ", unit.c_str());
  return text;
}

// At least one space after the text, so a long number never runs into the next column.
std::string pad(std::string text, std::size_t width) {
  text.append(text.size() < width ? width - text.size() : 1, ' ');
  return text;
}

// "privacy": null unless privacy is on; the plan's fields null when it
// could not be made. Never the key (the preflight never sees it).
nlohmann::ordered_json privacy_json(const std::optional<PrivacySummary>& summary) {
  if (!summary) return nullptr;
  const PrivacySummary& p = *summary;
  const auto planned = [&](auto value) {
    return p.plan ? nlohmann::ordered_json(value) : nlohmann::ordered_json(nullptr);
  };
  const privacy::PrivacyPlan plan = p.plan.value_or(privacy::PrivacyPlan{});
  return {{"units", p.examples.examples},
          {"sampling_rate", planned(plan.sampling_rate)},
          {"noise_multiplier", planned(plan.noise_multiplier)},
          {"calibrated", planned(plan.calibrated)},
          {"max_grad_norm", planned(plan.max_grad_norm)},
          {"delta", planned(plan.delta)},
          {"accountant", planned(privacy::accountant_kind_name(plan.accountant))},
          {"sampling", planned(plan.poisson ? "poisson" : "shuffle")},
          {"planned_steps", planned(plan.planned_steps)},
          {"epsilon", planned(p.epsilon)},
          {"expected_batch", planned(plan.expected_batch)},
          {"batch_bound_1e6", planned(p.batch_bound)},
          {"micro_steps_expected", planned(p.micro_steps_expected)},
          {"micro_steps_bound", planned(p.micro_steps_bound)},
          {"bound_step_seconds", optional_json(p.bound_step_seconds)},
          {"longest_example", p.examples.longest_example},
          {"truncated_examples", p.examples.truncated_examples},
          {"padding_share", p.examples.padding_share}};
}

// "parallel": null until layout.parallel ran; its predictions null on one
// node or when the model had no compute time.
nlohmann::ordered_json parallel_json(const std::optional<ParallelSummary>& summary) {
  if (!summary) return nullptr;
  const ParallelSummary& p = *summary;
  nlohmann::ordered_json layouts = nlohmann::ordered_json::array();
  for (const auto& l : p.layouts)
    layouts.push_back({{"shard_group_size", l.shard_group_size},
                       {"tensor_parallel_size", l.tensor_parallel_size},
                       {"step_s", l.step_s},
                       {"efficiency", l.efficiency},
                       {"exposed_comm_s", l.exposed_comm_s},
                       {"tensor_s", l.tensor_s},
                       {"state_bytes_per_rank", l.state_bytes_per_rank},
                       {"fits_memory", l.fits_memory}});
  return {{"shard_group_size", p.shard_group_size},
          {"tensor_parallel_size", p.tensor_parallel_size},
          {"replica_groups", p.replica_groups},
          {"nodes", p.nodes},
          {"ranks_per_node", p.ranks_per_node},
          {"shard_group_nodes", p.shard_group_nodes},
          {"whole_nodes", p.whole_nodes},
          {"compute_s", optional_json(p.compute_s)},
          {"compute_source", p.compute_source.empty() ? nlohmann::ordered_json(nullptr)
                                                      : nlohmann::ordered_json(p.compute_source)},
          {"intra_node_bandwidth_gbs", p.intra_node_bandwidth_gbs},
          {"inter_node_bandwidth_gbps", p.inter_node_bandwidth_gbps},
          {"step_s", optional_json(p.step_s)},
          {"efficiency", optional_json(p.efficiency)},
          {"exposed_comm_s", optional_json(p.exposed_comm_s)},
          {"best_shard_group_size", optional_json(p.best_shard_group_size)},
          {"best_tensor_parallel_size", optional_json(p.best_tensor_parallel_size)},
          {"best_step_s", optional_json(p.best_step_s)},
          {"best_efficiency", optional_json(p.best_efficiency)},
          {"slower", optional_json(p.slower)},
          {"threshold", p.threshold},
          {"layouts", layouts}};
}

}  // namespace

nlohmann::ordered_json report_to_json(const PreflightReport& report, const Verdict& verdict,
                                      int world_size, double duration_s,
                                      const std::vector<RankFacts>& ranks) {
  nlohmann::ordered_json checks = nlohmann::ordered_json::array();
  for (const auto& check : report.checks()) checks.push_back(check_to_json(check));
  nlohmann::ordered_json components = nlohmann::ordered_json::object();
  for (const auto& component : report.memory.components)
    components[component.name] = component.bytes;
  nlohmann::ordered_json rank_entries = nlohmann::ordered_json::array();
  for (const auto& facts : ranks) rank_entries.push_back(facts_to_json(facts));
  const auto& m = report.memory;
  nlohmann::ordered_json measurements = nlohmann::ordered_json::array();
  for (const auto& measurement : m.measurements)
    measurements.push_back({{"micro_batch_size", measurement.micro_batch_size},
                            {"tensor_peak_bytes", optional_json(measurement.tensor_peak_bytes)},
                            {"out_of_memory", !measurement.tensor_peak_bytes},
                            {"seconds", measurement.seconds}});
  return {{"schema_version", kPreflightSchemaVersion},
          {"verdict", verdict.go ? "go" : "no-go"},
          {"exit_code", static_cast<int>(verdict.code)},
          {"reason", verdict.reason},
          {"world_size", world_size},
          {"duration_s", duration_s},
          {"checks", checks},
          {"model",
           {{"parameters", optional_json(report.model.parameters)},
            {"trainable_parameters", optional_json(report.model.trainable_parameters)}}},
          {"memory",
           {{"device", m.device},
            {"capacity_bytes", optional_json(m.capacity_bytes)},
            {"budget_bytes", optional_json(m.budget_bytes)},
            {"predicted_peak_bytes", optional_json(m.predicted_peak_bytes)},
            {"measured_peak_bytes", optional_json(m.measured_peak_bytes)},
            {"components", components},
            {"max_micro_batch_size", optional_json(m.max_micro_batch_size)},
            {"fixed_overhead_bytes", optional_json(m.fixed_overhead_bytes)},
            {"base_bytes_per_parameter", optional_json(m.base_bytes_per_parameter)},
            {"peak_phase", m.peak_phase.empty() ? nlohmann::ordered_json(nullptr)
                                                : nlohmann::ordered_json(m.peak_phase)},
            {"measurements", measurements}}},
          {"dataloader",
           {{"estimated_bytes", optional_json(report.dataloader.estimated_bytes)},
            {"available_bytes", optional_json(report.dataloader.available_bytes)},
            {"first_batch_s", optional_json(report.dataloader.first_batch_s)}}},
          {"privacy", privacy_json(report.privacy)},
          {"parallel", parallel_json(report.parallel)},
          {"ranks", rank_entries}};
}

void write_preflight_json(const std::string& run_dir, const nlohmann::ordered_json& document) {
  write_file_atomic(run_dir + "/preflight.json", document.dump(2) + "\n");
}

std::vector<std::string> format_report_table(const PreflightReport& report,
                                             const Verdict& verdict) {
  std::size_t id_width = 5;
  for (const auto& check : report.checks()) id_width = std::max(id_width, check.id.size());
  std::vector<std::string> lines;
  lines.push_back(pad("status", 8) + pad("check", id_width + 2) + pad("predicted", 12) +
                  pad("measured", 12) + pad("threshold", 12) + "finding");
  for (const auto& check : report.checks()) {
    lines.push_back(pad(status_name(check.status), 8) + pad(check.id, id_width + 2) +
                    pad(number_text(check.predicted, check.unit), 12) +
                    pad(number_text(check.measured, check.unit), 12) +
                    pad(number_text(check.threshold, check.unit), 12) + check.message);
    if (check.status != CheckStatus::kPass && !check.remediation.empty())
      lines.push_back(std::string(8, ' ') + "-> " + check.remediation);
  }
  lines.push_back(verdict.go ? "verdict: " + verdict.reason
                             : "verdict: " + verdict.reason + " (exit " +
                                   std::to_string(static_cast<int>(verdict.code)) + ")");
  return lines;
}

}  // namespace nss::preflight

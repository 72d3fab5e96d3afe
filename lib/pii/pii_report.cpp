#include "pii/pii_report.h"

#include <algorithm>
#include <fstream>
#include <functional>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace nss::pii {
namespace {

using nlohmann::ordered_json;

ordered_json entity_counts(const std::map<Entity, std::int64_t>& counts) {
  ordered_json out = ordered_json::object();
  for (const auto& [entity, count] : counts) out[std::string(entity_name(entity))] = count;
  return out;
}

ordered_json evidence_json(const ColumnStatistics& column) {
  const ColumnEvidence& e = column.evidence;
  ordered_json out = {{"source", e.source}};
  if (e.source == "scan") {
    out["cells_scanned"] = column.cells_scanned;
    out["cells_with_detection"] = column.cells_with_detection;
    return out;
  }
  out["header_hint"] = e.header_hint ? ordered_json(entity_name(*e.header_hint)) : ordered_json();
  out["share"] = e.share;
  out["shape_share"] = e.shape_share;
  out["cells_checked"] = e.cells_checked;
  return out;
}

ordered_json column_json(const ColumnStatistics& column) {
  const ordered_json entity =
      column.assigned_entity ? ordered_json(entity_name(*column.assigned_entity)) : ordered_json();
  return {{"assigned_type", entity},
          {"assigned_entity", entity},
          {"detected_entity_counts", entity_counts(column.counts)},
          {"detected_entity_unique_counts", entity_counts(column.unique_counts)},
          {"is_transformed", !column.transform_functions.empty()},
          {"transform_functions", column.transform_functions},
          {"evidence", evidence_json(column)}};
}

[[noreturn]] void bad_report(const std::string& path, const std::string& what) {
  throw DataError("pii", "the PII report " + path + " " + what,
                  "give the pii.json nss_prepare_data --pii wrote for this table");
}

}  // namespace

std::string pii_report_text(const PiiReportInfo& info, const PiiResult& result) {
  ordered_json doc = {{"format", kReportFormat},
                      {"version", kReportVersion},
                      {"tool", info.tool},
                      {"mode", pii_mode_name(info.mode)}};
  ordered_json entities = ordered_json::array();
  for (const Entity e : info.entities) entities.push_back(entity_name(e));
  doc["entities"] = entities;
  doc["source_table"] = info.source_table;
  doc["source_sha256"] = info.source_sha256;
  doc["training_rows"] = info.training_rows;
  doc["holdout_rows"] = info.holdout_rows;
  doc["holdout_source_rows"] = info.holdout_source_rows;
  doc["key_id"] = info.key_id.empty() ? ordered_json() : ordered_json(info.key_id);
  doc["pii_replacer_time_sec"] = info.seconds;
  doc["named_entity_model"] =
      info.named_entity_model.is_null()
          ? ordered_json{{"used", false},
                         {"reason",
                          "no --pii-ner-model was given: names and places inside free text are "
                          "found only where they match Faker's word lists"}}
          : info.named_entity_model;
  ordered_json columns = ordered_json::object();
  for (const ColumnStatistics& column : result.columns) columns[column.name] = column_json(column);
  doc["column_statistics"] = columns;
  if (info.mode == PiiMode::kReplace) {
    ordered_json surrogates = ordered_json::object();
    for (const auto& [entity, counts] : result.surrogates)
      surrogates[std::string(entity_name(entity))] = {
          {"distinct_values", counts.distinct},
          {"collisions_resolved", counts.collisions_resolved},
          {"collisions_kept", counts.collisions_kept}};
    doc["surrogates"] = surrogates;
  }
  return doc.dump(2) + "\n";
}

namespace {

template <class Counts>
void add_column(PiiFindings& findings, const std::string& name, const std::string* entity,
                const Counts& counts) {
  if (entity) {
    findings.columns.push_back(name + " (" + *entity + ")");
    return;
  }
  std::int64_t found = 0;
  for (const auto& [counted, count] : counts) found += count;
  findings.values_in_text += found;
  findings.text_columns += found > 0;
}

}  // namespace

std::string PiiFindings::column_list() const {
  std::string list;
  for (const std::string& column : columns) list += (list.empty() ? "" : ", ") + column;
  return list;
}

PiiFindings pii_findings(const PiiResult& result) {
  PiiFindings findings;
  for (const ColumnStatistics& column : result.columns) {
    const std::string entity =
        column.assigned_entity ? std::string(entity_name(*column.assigned_entity)) : "";
    add_column(findings, column.name, column.assigned_entity ? &entity : nullptr, column.counts);
  }
  return findings;
}

PiiFindings pii_findings(const PiiReport& report) {
  PiiFindings findings;
  for (const ReportedColumn& column : report.columns)
    add_column(findings, column.name, column.assigned_entity ? &*column.assigned_entity : nullptr,
               column.detected_entity_counts);
  return findings;
}

PiiReport read_pii_report(const std::string& path) {
  std::ifstream in(path);
  if (!in) bad_report(path, "cannot be read");
  PiiReport report;
  report.path = path;
  try {
    const ordered_json doc = ordered_json::parse(in);
    if (doc.value("format", "") != kReportFormat) bad_report(path, "is not a PII report");
    if (doc.at("version").get<int>() > kReportVersion)
      bad_report(path, "is of a newer version than this nss_hpc reads");
    report.mode = doc.at("mode").get<std::string>();
    report.key_id = doc.at("key_id").is_string() ? doc["key_id"].get<std::string>() : "";
    report.source_table = doc.at("source_table").get<std::string>();
    report.source_sha256 = doc.at("source_sha256").get<std::string>();
    report.training_rows = doc.at("training_rows").get<std::int64_t>();
    report.holdout_rows = doc.at("holdout_rows").get<std::int64_t>();
    report.holdout_source_rows = doc.at("holdout_source_rows").get<std::vector<std::int64_t>>();
    for (const auto& [name, column] : doc.at("column_statistics").items()) {
      ReportedColumn reported{name, std::nullopt, {}, {}, ""};
      if (column.at("assigned_entity").is_string())
        reported.assigned_entity = column["assigned_entity"].get<std::string>();
      for (const auto& [entity, count] : column.at("detected_entity_counts").items())
        reported.detected_entity_counts[entity] = count.get<std::int64_t>();
      reported.transform_functions =
          column.at("transform_functions").get<std::vector<std::string>>();
      reported.evidence = column.at("evidence").at("source").get<std::string>();
      report.columns.push_back(std::move(reported));
    }
  } catch (const nlohmann::json::exception& e) {
    bad_report(path, std::string("is damaged: ") + e.what());
  }
  const auto& held = report.holdout_source_rows;
  const bool ascending =
      std::adjacent_find(held.begin(), held.end(), std::greater_equal<>()) == held.end();
  if (static_cast<std::int64_t>(held.size()) != report.holdout_rows || !ascending ||
      (!held.empty() && held.front() < 0))
    bad_report(path, "is damaged: holdout_source_rows are not the " +
                         std::to_string(report.holdout_rows) + " ascending holdout rows");
  return report;
}

}  // namespace nss::pii

#include "pipeline/ledger.h"

#include <array>
#include <filesystem>
#include <utility>

#include "core/error.h"
#include "core/fs.h"
#include "core/output_location.h"

namespace nss::pipeline {
namespace {

constexpr int kVersion = 1;

constexpr std::array<std::pair<StageStatus, const char*>, 6> kStatusNames{{
    {StageStatus::kPending, "pending"},
    {StageStatus::kRunning, "running"},
    {StageStatus::kCompleted, "completed"},
    {StageStatus::kInterrupted, "interrupted"},
    {StageStatus::kFailed, "failed"},
    {StageStatus::kOff, "off"},
}};

StageStatus parse_status(const std::string& text) {
  for (const auto& [status, name] : kStatusNames)
    if (text == name) return status;
  throw nlohmann::json::other_error::create(501, "unknown stage status '" + text + "'", nullptr);
}

nlohmann::ordered_json stage_json(const StageRecord& s) {
  nlohmann::ordered_json outputs = nlohmann::ordered_json::object();
  for (const auto& [name, file] : s.outputs)
    outputs[name] = {{"path", file.path}, {"sha256", file.sha256}};
  return {{"name", s.name},
          {"status", status_name(s.status)},
          {"inputs", s.inputs},
          {"outputs", outputs},
          {"facts", s.facts},
          {"started", s.started},
          {"ended", s.ended},
          {"seconds", s.seconds},
          {"total_seconds", s.total_seconds},
          {"runs", s.runs},
          {"exit_code", s.exit_code},
          {"message", s.message}};
}

StageRecord stage_from_json(const nlohmann::ordered_json& j) {
  StageRecord s;
  s.name = j.at("name").get<std::string>();
  s.status = parse_status(j.at("status").get<std::string>());
  s.inputs = j.at("inputs").get<std::map<std::string, std::string>>();
  for (const auto& [name, file] : j.at("outputs").items())
    s.outputs[name] = {file.at("path").get<std::string>(), file.at("sha256").get<std::string>()};
  s.facts = j.at("facts");
  s.started = j.at("started").get<std::string>();
  s.ended = j.at("ended").get<std::string>();
  s.seconds = j.at("seconds").get<double>();
  s.total_seconds = j.at("total_seconds").get<double>();
  s.runs = j.at("runs").get<int>();
  s.exit_code = j.at("exit_code").get<int>();
  s.message = j.at("message").get<std::string>();
  return s;
}

std::vector<StageRecord> read_stages(const std::string& text) {
  const auto json = nlohmann::ordered_json::parse(text);
  if (json.at("version").get<int>() != kVersion)
    throw nlohmann::json::other_error::create(
        501, "version " + json.at("version").dump() + " (this build reads 1)", nullptr);
  std::vector<StageRecord> stages;
  for (const auto& entry : json.at("stages")) stages.push_back(stage_from_json(entry));
  return stages;
}

}  // namespace

const char* status_name(StageStatus status) {
  for (const auto& [value, name] : kStatusNames)
    if (value == status) return name;
  return "?";
}

Ledger Ledger::open(const std::string& path, const std::vector<std::string>& stage_names) {
  Ledger ledger;
  ledger.path_ = path;
  std::error_code ec;
  std::vector<StageRecord> recorded;
  if (std::filesystem::exists(std::filesystem::symlink_status(path, ec))) {
    const std::string text = read_text_file(path, "pipeline");
    try {
      recorded = read_stages(text);
      ledger.summary_ =
          nlohmann::ordered_json::parse(text).value("summary", nlohmann::ordered_json::object());
    } catch (const nlohmann::json::exception& e) {
      throw DataError("pipeline",
                      path + " is not a pipeline ledger nss_synthesize can read: " + e.what(),
                      "restore it, or move it away to run every stage again");
    }
  }
  for (const auto& name : stage_names) {
    StageRecord stage;
    stage.name = name;
    for (auto& r : recorded)
      if (r.name == name) stage = std::move(r);
    ledger.stages_.push_back(std::move(stage));
  }
  return ledger;
}

StageRecord& Ledger::stage(const std::string& name) {
  for (auto& s : stages_)
    if (s.name == name) return s;
  throw InternalError("pipeline", "no stage named " + name);
}

const StageRecord& Ledger::stage(const std::string& name) const {
  return const_cast<Ledger*>(this)->stage(name);
}

nlohmann::ordered_json Ledger::to_json() const {
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();
  for (const auto& s : stages_) stages.push_back(stage_json(s));
  return {{"version", kVersion}, {"stages", stages}, {"summary", summary_}};
}

void Ledger::save() const {
  // The run directory's rules: a full or read-only disk is the place's
  // problem (exit 2, naming it), and a reader never sees half a ledger.
  write_output_file({path_, "pipeline", "run.output_dir", ExistingOutput::kReplaceFile},
                    to_json().dump(2) + "\n");
}

}  // namespace nss::pipeline

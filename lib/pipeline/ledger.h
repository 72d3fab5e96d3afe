// pipeline.json: what each stage of nss_synthesize did — its status, the
// digests of the inputs it ran on, its outputs (with their SHA-256) and its
// timings. Written by rank 0 atomically after every change, so a job killed
// at any moment leaves the last state whole; read back at the next start to
// skip every stage that completed on the same inputs (docs/pipeline.md).
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nss::pipeline {

enum class StageStatus { kPending, kRunning, kCompleted, kInterrupted, kFailed, kOff };

const char* status_name(StageStatus status);

/// One output file of a stage: where it is and its SHA-256 when the stage ended.
struct OutputFile {
  std::string path;
  std::string sha256;
};

struct StageRecord {
  std::string name;
  StageStatus status = StageStatus::kPending;
  std::map<std::string, std::string> inputs;  // what it ran on -> SHA-256 (hex)
  std::map<std::string, OutputFile> outputs;
  nlohmann::ordered_json facts = nlohmann::ordered_json::object();  // figures worth a look
  std::string started, ended;                                       // UTC, utc_stamp()
  double seconds = 0;                                               // of the last run
  double total_seconds = 0;  // of every run, interrupted ones included
  int runs = 0;
  int exit_code = 0;
  std::string message;  // why it failed or stopped
};

class Ledger {
 public:
  /// The ledger at `path`, or a new one with `stage_names` pending when there
  /// is none. DataError (exit 4) for a file that is not a ledger.
  static Ledger open(const std::string& path, const std::vector<std::string>& stage_names);

  StageRecord& stage(const std::string& name);
  const StageRecord& stage(const std::string& name) const;
  const std::vector<StageRecord>& stages() const { return stages_; }
  nlohmann::ordered_json& summary() { return summary_; }

  /// Writes the ledger atomically; UsageError (exit 2) when the run
  /// directory cannot take it (full, read-only).
  void save() const;
  nlohmann::ordered_json to_json() const;

 private:
  std::string path_;
  std::vector<StageRecord> stages_;
  nlohmann::ordered_json summary_ = nlohmann::ordered_json::object();
};

}  // namespace nss::pipeline

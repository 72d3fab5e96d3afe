// The seam of nss_synthesize: a stage is one step from the table to the
// evaluated synthetic records (prepare, preflight, fine-tune, sample,
// evaluate). The pipeline (pipeline_job.h) decides whether a stage runs —
// it is skipped when the ledger holds a completed run on the same inputs
// whose outputs are still there, unchanged — records what it did, and stops
// between stages when a signal asks it to.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <mpi.h>
#include <nlohmann/json.hpp>

#include "comm/communicator.h"
#include "config/config.h"
#include "core/error.h"
#include "pipeline/ledger.h"
#include "pipeline/run_paths.h"

namespace nss::pipeline {

/// nss_synthesize's command line.
struct SynthesizeOptions {
  std::string table;  // the CSV to synthesize
  std::string config_path;
  std::vector<std::string> overrides;  // --set key.path=value
  bool print_config = false;
};

/// What every stage reads.
struct StageContext {
  comm::Communicator& world;
  MPI_Comm mpi_world;
  const SynthesizeOptions& options;
  const config::Config& config;  // the pipeline's, as every rank received it
  const RunPaths& paths;
  std::string training_config;     // <run>/training.yaml: the fine-tune's resolved configuration
  std::string checkpoint_dir;      // the fine-tune's checkpoint.dir
  std::string hosts;               // every rank's host, in rank order
  const Ledger* ledger = nullptr;  // rank 0: the earlier stages' records
};

/// What one run of a stage produced; rank 0's outputs and facts are recorded.
struct StageResult {
  ExitCode code = ExitCode::kOk;  // kOk, or 7/75: a signal stopped it, to be run again
  std::map<std::string, OutputFile> outputs;
  nlohmann::ordered_json facts = nlohmann::ordered_json::object();
};

class Stage {
 public:
  virtual ~Stage() = default;
  virtual const char* name() const = 0;
  /// Every rank runs it (fine-tune, sampling), or rank 0 alone (data, evaluation).
  virtual bool on_every_rank() const = 0;
  /// False when the configuration turns it off (pipeline.evaluate: false).
  virtual bool enabled(const StageContext&) const { return true; }
  /// On rank 0: what it reads, each named with its SHA-256 (files) or the
  /// SHA-256 of the settings that shape its result.
  virtual std::map<std::string, std::string> inputs(const StageContext& context) const = 0;
  /// On rank 0, before the ledger records a new run: throws when it cannot
  /// run on its inputs, or running it again would harm what later stages
  /// hold (the ledger is left as it was).
  virtual void check_can_run(const StageContext&) const {}
  virtual StageResult run(const StageContext& context) = 0;
  /// On rank 0, once the stage is completed (now or at an earlier start):
  /// writes what later stages read that follows from its outputs.
  virtual void publish(const StageContext&) const {}
};

/// The stages in order.
std::vector<std::unique_ptr<Stage>> make_stages();

/// An output file as the ledger records it (its SHA-256 now).
OutputFile output_file(const std::string& path);

/// The output a completed stage recorded under `name`, from the ledger.
const OutputFile& recorded_output(const StageContext& context, const std::string& stage,
                                  const std::string& name);

/// The fine-tune's final step directory, as the train stage recorded it.
std::string recorded_step_dir(const StageContext& context);

/// Empties a directory the pipeline owns before its stage writes it again
/// (UsageError when it cannot).
void clear_stage_directory(const std::string& dir);

}  // namespace nss::pipeline

// What nss_generate does once its command line is read: claim the output
// (a JSONL file, or the records directory locked against a second job),
// load the model it was pointed at, then write samples of the prompts or
// synthetic records of the training table. Under mpirun every rank holds
// the whole model. Prompts: each rank generates a contiguous share and rank
// 0 writes every rank's lines in rank order. Records: the ranks sample in
// rounds and rank 0 judges the samples in number order
// (generate/record_generation.h). Either way the output is the one a single
// process writes.
#pragma once

#include <string>

#include <mpi.h>

#include "comm/communicator.h"
#include "config/choices.h"
#include "core/error.h"
#include "eval/inference_model.h"
#include "generate/generation.h"
#include "generate/record_generation.h"

namespace nss::generate {

/// How the caller's user spells the settings a records run's messages ask
/// to change: nss_generate's options, or the pipeline's keys.
struct SettingNames {
  std::string max_new_tokens = "--max-new-tokens";
  std::string temperature = "--temperature";
  std::string invalid_fraction_threshold = "--invalid-fraction-threshold";
  std::string patience = "--patience";
  std::string training_steps;  // what "train longer" raises; empty: not named
};

struct GenerationJob {
  eval::ModelSource model;   // --model, --base, --quantize, --double-quant
  std::string tokenizer;     // --tokenizer; empty: the training data's, else the model's
  std::string prompt;        // --prompt
  std::string prompts;       // --prompts FILE.jsonl
  std::string output;        // --output: the JSONL file (empty: stdout) or the records directory
  std::string records_data;  // --records-data: the token file a model without a dataset record uses
  config::ComputeDtype dtype = config::ComputeDtype::kAuto;
  GenerationRequest request;  // sampling, lengths, stops, samples, batch size
  RecordsRequest records;     // records.wanted > 0: --records
  bool records_given = false, num_samples_given = false, stop_given = false,
       constrain_given = false;
  SettingNames names;
};

/// Checks the combination of options (UsageError, exit 2) and copies the
/// shared sampling settings into `job.records`: on every rank, before the
/// model loads.
void check_generation_job(GenerationJob& job);

/// Runs the job, collective over `world` (`mpi_world` its MPI communicator,
/// which device selection needs): kOk, or the exit code of the signal that
/// ended a records run (7 or 75).
ExitCode run_generation(comm::Communicator& world, MPI_Comm mpi_world, const GenerationJob& job);

}  // namespace nss::generate

// The preflight as a whole: every rank reports its facts, rank 0 runs the
// checks, writes preflight.json and prints the table, and the verdict reaches
// every rank under a deadline. Components that need the model, the FSDP layer
// or the dataloader add their checks as stages of a PreflightPlan.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <mpi.h>

#include "comm/communicator.h"
#include "comm/mpi_runtime.h"
#include "preflight/context.h"
#include "preflight/data_checks.h"
#include "preflight/report.h"

namespace nss::preflight {

/// A group of rank-0 checks added after the built-in ones. `run` appends its
/// checks (and fills report summaries); if it throws, the report gets a
/// failing check `id` with the error's exit code — never a skip.
struct PreflightStage {
  std::string id;
  std::function<void(PreflightReport& report, const PreflightContext& context)> run;
};

struct PreflightPlan {
  /// Validates each dataset on rank 0 under the deadline (lib/data's
  /// validation replaces the built-in HDF5 signature check).
  DatasetValidator validate_dataset = hdf5_signature_validator();
  /// Model, memory, synthetic-step and first-batch checks, in order.
  std::vector<PreflightStage> stages;
  /// Test instrumentation: runs on rank 0 just before the verdict is sent.
  std::function<void()> before_verdict;
};

struct PreflightInputs {
  const config::Config& config;
  comm::ProcessLayout layout;
  DeviceKind device = DeviceKind::kCpu;
  std::string run_dir;  // preflight.json goes here; logs/ names rank 0's log in messages
  std::uint64_t baseline_resident_bytes = 0;  // rank 0's, see PreflightContext
};

/// Rank 0's part without communication: built-in checks in order, then the
/// plan's stages. Used by run_preflight and by tests.
PreflightReport build_report(const PreflightContext& context, const PreflightPlan& plan);

/// The whole preflight (collective over `comm`/`world`). Returns the verdict
/// on go. On no-go every rank throws the same comm::AgreedError (the verdict's
/// code and reason). A rank that does not hear from rank 0 within
/// preflight.verdict_timeout_s logs why and ends the job with exit code 3.
Verdict run_preflight(comm::Communicator& comm, MPI_Comm world, const PreflightInputs& inputs,
                      const PreflightPlan& plan);

}  // namespace nss::preflight

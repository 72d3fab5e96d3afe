// nss_synthesize: from a table to evaluated synthetic records in one job.
// Rank 0 resolves the configuration and holds the run directory; the
// stages (stages.h) run in order, each skipped when pipeline.json records a
// completed run on the same inputs whose outputs are unchanged, so a
// requeued or restarted job continues where the last one stopped (inside
// the fine-tune: from its last checkpoint). A signal stops the job at the
// next stage boundary (the fine-tune and the sampling stop sooner, at their
// own boundaries) with 7 or 75.
#pragma once

#include <functional>

#include <mpi.h>

#include "comm/communicator.h"
#include "core/error.h"
#include "pipeline/stage.h"

namespace nss::pipeline {

/// Instrumentation for test binaries that drive the real job; nss_synthesize passes none.
struct PipelineHooks {
  std::function<void(const char* stage)>
      after_stage;  // every rank, once a stage ran or was skipped
};

/// Runs the job, collective over `world` (`mpi_world` its MPI communicator):
/// kOk when every stage completed, 7/75 when a signal stopped it; a stage's
/// failure is thrown as the error that stage threw.
ExitCode run_pipeline(comm::Communicator& world, MPI_Comm mpi_world,
                      const SynthesizeOptions& options, const PipelineHooks& hooks = {});

}  // namespace nss::pipeline

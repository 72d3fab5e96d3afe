// The configuration of an nss_synthesize job: the user's file and --set
// overrides, with the keys the pipeline owns set to its run directory's
// files (data.path, eval.path, run.output_dir, checkpoint.dir), and the
// fine-tune's part of it as the text nss_hpc's job reads, which follows the
// prepared data (validation on the holdout only when there is one).
#pragma once

#include <string>

#include "config/config.h"
#include "pipeline/stage.h"

namespace nss::pipeline {

struct ResolvedPipeline {
  config::Config config;  // the fine-tune's keys as it runs them, and the pipeline section
  std::string run_dir;    // the pipeline's run directory (the user's run.output_dir)
};

/// Loads and resolves (model.from_pretrained's shape included); UsageError
/// (exit 2) listing every problem, as nss_hpc's configuration.
ResolvedPipeline load_pipeline_config(const SynthesizeOptions& options);

/// The fine-tune's configuration as <run>/training.yaml holds it: `resolved`
/// with the pipeline keys at their defaults, and without validation when
/// the prepared data has no holdout token file (pipeline.holdout 0, or a
/// table too small to hold rows out of).
std::string training_yaml(const config::Config& resolved, bool holdout_tokens);

}  // namespace nss::pipeline

#include "pipeline/pipeline_config.h"

#include "arch/architecture.h"
#include "config/load.h"
#include "hf/hf_config.h"
#include "pipeline/run_paths.h"

namespace nss::pipeline {
namespace {

// The keys the pipeline sets: the fine-tune reads the prepared records and
// validates on the held-out ones, inside <run>/train.
std::vector<std::string> owned_keys(const config::Config& user, const RunPaths& paths) {
  std::vector<std::string> keys{"run.output_dir=" + paths.training_run(),
                                "data.path=" + paths.tokens()};
  if (user.pipeline.holdout > 0) {
    keys.push_back("eval.path=" + paths.holdout_tokens());
  } else {
    keys.push_back("eval.path=");
    keys.push_back("eval.interval_steps=0");
  }
  // A checkpoint.dir the user chose stays; the default follows the fine-tune.
  if (user.checkpoint.dir == paths.root + "/checkpoints")
    keys.push_back("checkpoint.dir=" + paths.training_run() + "/checkpoints");
  return keys;
}

}  // namespace

ResolvedPipeline load_pipeline_config(const SynthesizeOptions& options) {
  // eval.path is the pipeline's to set: a placeholder lets a file with
  // eval.interval_steps > 0 load before the run directory is known.
  auto first = options.overrides;
  first.push_back("eval.path=<set by nss_synthesize>");
  const config::Config user = config::load_config({options.config_path, first});
  ResolvedPipeline loaded;
  loaded.run_dir = user.run.output_dir;
  auto overrides = options.overrides;
  for (auto& key : owned_keys(user, RunPaths{loaded.run_dir})) overrides.push_back(key);
  loaded.config = config::load_config({options.config_path, overrides});
  if (!loaded.config.model.from_pretrained.empty()) {
    loaded.config.model = hf::resolve_pretrained_shape(loaded.config.model);
    config::validate(loaded.config);
  }
  arch::describe(loaded.config.model);
  return loaded;
}

std::string training_yaml(const config::Config& resolved, bool holdout_tokens) {
  config::Config training = resolved;
  training.pipeline = config::PipelineConfig{};
  if (!holdout_tokens) {
    training.eval.path.clear();
    training.eval.interval_steps = 0;
  }
  return config::to_yaml(training, /*with_comments=*/true);
}

}  // namespace nss::pipeline

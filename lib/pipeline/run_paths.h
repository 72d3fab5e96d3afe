// Where nss_synthesize keeps each stage's files inside its run directory
// (docs/pipeline.md, "The run directory").
#pragma once

#include <string>

namespace nss::pipeline {

struct RunPaths {
  std::string root;  // run.output_dir

  std::string ledger() const { return root + "/pipeline.json"; }
  std::string logs() const { return root + "/logs"; }
  std::string data() const { return root + "/data"; }
  /// The prepared token file; the preparation names its other files after it.
  std::string tokens() const { return data() + "/records.h5"; }
  std::string holdout_tokens() const { return data() + "/records.holdout.h5"; }
  std::string training_run() const { return root + "/train"; }
  std::string synthetic() const { return root + "/synthetic"; }
  std::string synthetic_table() const { return synthetic() + "/synthetic.csv"; }
  std::string evaluation() const { return root + "/evaluation"; }
  std::string privacy_report() const { return root + "/privacy.json"; }
};

}  // namespace nss::pipeline

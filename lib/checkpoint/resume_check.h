// What a resume compares between a step's training state and this run's:
// required fields end the resume when they differ (exit 5), the others are
// reported and training goes on. A stateful component whose section a resume
// must match (StatefulComponent::resume_mismatch) adds a required comparison.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checkpoint/training_state.h"

namespace nss::checkpoint {

/// One field a resume compares. Later features append theirs.
struct ResumeField {
  const char* name;
  bool required;
  nlohmann::json (*value)(const TrainingState& state);
  const char* why;  // what a difference means
};
const std::vector<ResumeField>& resume_fields();

/// A required comparison beyond the training state: a component's section
/// as the step holds it (null when absent) and as this run would save it.
struct SectionComparison {
  std::string name;
  nlohmann::json saved, current;
  const char* why;  // what a difference means
};

/// Compares the state saved in `step_dir` with this run's, then `sections`.
/// Throws CheckpointError naming every required field that differs, what
/// differs and how to start fresh; returns one line per other field that
/// differs.
std::vector<std::string> check_resume(const TrainingState& saved, const TrainingState& current,
                                      const std::string& step_dir,
                                      const std::vector<SectionComparison>& sections = {});

}  // namespace nss::checkpoint

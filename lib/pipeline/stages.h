// The stages of nss_synthesize, each in its own file.
#pragma once

#include <memory>

#include "pipeline/stage.h"

namespace nss::pipeline {

std::unique_ptr<Stage> make_prepare_stage();     // prepare_stage.cpp
std::unique_ptr<Stage> make_preflight_stage();   // training_stages.cpp
std::unique_ptr<Stage> make_training_stage();    // training_stages.cpp
std::unique_ptr<Stage> make_sampling_stage();    // sampling_stage.cpp
std::unique_ptr<Stage> make_evaluation_stage();  // evaluation_stage.cpp

}  // namespace nss::pipeline

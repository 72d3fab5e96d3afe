// Whether pipeline.max_new_tokens can hold what the model learned to write:
// every training example's completion (its record, or its group's records,
// and the end token) from the prepared token file, against the sampling
// limit, and the prompt with that limit against the model's positions.
// Checked before the fine-tune, so a limit that cannot work fails in seconds
// rather than after it, and again before each sampling.
#pragma once

#include "pipeline/stage.h"

namespace nss::pipeline {

/// On rank 0: UsageError (exit 2) naming pipeline.max_new_tokens and the
/// values that work when some completion is longer (records like it could
/// never be sampled whole) or the prompt and the limit exceed the model's
/// positions; naming the model's positions when no limit can work.
void check_record_length(const StageContext& context);

}  // namespace nss::pipeline

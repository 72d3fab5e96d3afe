// Preflight check data.holdout (docs/preflight.md): the holdout a records
// token file names (docs/data.md, "Holdout") is there, unchanged, has the
// table's columns, and no holdout row is a training example — what
// nss_evaluate will rely on after the run.
#pragma once

#include <string>

#include "data/token_dataset.h"
#include "preflight/check.h"

namespace nss::preflight {

/// The check for the training file `tokens` (configured as `key`):
/// skipped without a holdout record; failed (exit 4, naming the file) for
/// a holdout file used as training data, a missing, unreadable or changed
/// holdout, other columns than the schema's, or a holdout row among the
/// training examples.
Check holdout_check(const std::string& key, const data::TokenDataset& tokens);

}  // namespace nss::preflight

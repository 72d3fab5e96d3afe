// Check group 2, data (exit 4 on failure): the datasets open on every rank
// within the deadline, and rank 0 validates their format under the same
// deadline. The format validation is pluggable: the built-in one checks the
// HDF5 signature; lib/data's full validation (contiguous /tokens, length,
// max_token_id < vocab_size) replaces it through PreflightPlan.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "preflight/check.h"
#include "preflight/context.h"
#include "preflight/report.h"

namespace nss::preflight {

/// One dataset the run reads: role "train" (data.path) or "eval" (eval.path).
struct DatasetRef {
  std::string role;
  std::string key;  // "data.path" / "eval.path", for messages
  std::string path;
};

/// True when validation runs: eval.path set and eval.interval_steps > 0.
bool validation_enabled(const config::Config& config);

/// The datasets of a configuration (eval only when validation runs).
std::vector<DatasetRef> configured_datasets(const config::Config& config);

/// Validates one dataset on rank 0 and returns its checks (ids "<role>.format"
/// or finer, e.g. "data.tokens_in_vocabulary"). It runs on its own thread
/// under preflight.first_batch_timeout_s, so it must capture by value.
using DatasetValidator =
    std::function<std::vector<Check>(const DatasetRef& dataset, const PathProbe& rank0_probe)>;

/// The built-in validator: the file carries the HDF5 signature.
DatasetValidator hdf5_signature_validator();

/// "data.open" / "eval.open": the dataset opened on every rank (eval skipped,
/// with the reason, when eval.path is empty).
std::vector<Check> check_datasets_open(const PreflightContext& context);

/// Runs `validator` on every dataset that opened on rank 0, under the deadline,
/// adding its checks to `report` ("<role>.format" fails with exit 4 on timeout;
/// skipped when the dataset did not open).
void check_dataset_formats(const PreflightContext& context, const DatasetValidator& validator,
                           PreflightReport& report);

}  // namespace nss::preflight

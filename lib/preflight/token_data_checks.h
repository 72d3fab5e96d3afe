// The data checks that read the tokens through lib/data (exit 4 on failure):
// the full dataset validation that replaces the built-in HDF5 signature check
// (PreflightPlan::validate_dataset), and the first batch through the real
// dataloader within preflight.first_batch_timeout_s ("data.first_batch").
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "preflight/check.h"
#include "preflight/context.h"
#include "preflight/data_checks.h"
#include "preflight/report.h"

namespace nss::preflight {

/// data::TokenDataset::open + data::check_dataset with what the job needs:
/// seq_len, one global batch (validation: global_batch_size x eval.batches)
/// and model.vocab_size. Checks "<role>.format" (the file, its /tokens and its
/// length) and "<role>.vocabulary" (max_token_id < model.vocab_size, and no
/// negative id in a sampled scan of signed /tokens).
DatasetValidator token_dataset_validator(const config::Config& config);

/// With data.packing documents or none: the input spans of the training
/// data's costliest packed row (data::PackedSource::costliest_row_spans),
/// read within preflight.first_batch_timeout_s. Empty for windows, and when
/// the file cannot tell (the data checks report why): the memory model then
/// takes one document filling the row.
std::vector<std::int64_t> packed_row_spans(const config::Config& config);

/// Delivers rank 0's first micro-batch of the training data; returns the
/// seconds it took. Runs on its own thread under the deadline, so it must
/// not reference the caller's frame.
using FirstBatchFetch = std::function<double(const config::Config& config, int world_size)>;

/// Opens data.path and takes one micro-batch from a data::DataLoader built as
/// the trainer builds it (rank 0's share, data.num_workers, prefetch_factor,
/// its ids checked against model.vocab_size).
double fetch_first_batch(const config::Config& config, int world_size);

/// "data.first_batch": `fetch` within preflight.first_batch_timeout_s (fail,
/// exit 4, in time when it does not deliver); fills
/// report.dataloader.first_batch_s. Skipped when data.format did not pass.
Check check_first_batch(const PreflightContext& context, PreflightReport& report,
                        const FirstBatchFetch& fetch = fetch_first_batch);

}  // namespace nss::preflight

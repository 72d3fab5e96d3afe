// What one-example-per-row training (data.packing: none, truncate) makes of a
// token file, as the privacy preflight reports it: the privacy units, how many
// lose tokens to truncation, and how much of the rows is padding. Computed
// from /document_offsets alone: no token is read.
#pragma once

#include <cstdint>
#include <vector>

#include "data/token_dataset.h"

namespace nss::data {

struct ExampleStatistics {
  std::int64_t examples = 0;            // documents: the privacy units, one row each
  std::int64_t longest_example = 0;     // tokens of the longest document
  std::int64_t truncated_examples = 0;  // longer than a row (seq_len + 1 tokens)
  std::int64_t truncated_tokens = 0;    // tokens those lose
  /// Input slots that hold no token of their example, over examples x seq_len.
  double padding_share = 0;
};

/// The statistics of `dataset` at `seq_len` (> 0). DataError when it has no
/// /document_offsets.
ExampleStatistics example_statistics(const TokenDataset& dataset, std::int64_t seq_len);

/// The targets (/loss_mask 1) of each document, in order: an example's
/// completion and its end token, what a model sampling such an example
/// generates. DataError when `dataset` has no /document_offsets or no
/// /loss_mask.
std::vector<std::int64_t> completion_lengths(const TokenDataset& dataset);

}  // namespace nss::data

// In-order, unshuffled batches for evaluation (nss_eval, validation): batch k
// holds samples k*B .. k*B + B - 1 in file order — windows, window i =
// tokens[i*seq_len, i*seq_len + seq_len + 1), or rows of documents packed in
// file order (sample_source.h). Across ranks, rank r of W reads the rows
// [r*B/W, (r+1)*B/W) of every batch, so the batches are the same at any
// world size.
#pragma once

#include <cstdint>
#include <memory>

#include "data/sample_source.h"
#include "data/token_batch.h"
#include "data/token_dataset.h"

namespace nss::data {

class SequentialBatchReader {
 public:
  /// UsageError when sizes are not positive or world_size does not divide
  /// batch_size; DataError when the dataset holds fewer than
  /// batch_size x num_batches samples, or packing needs document offsets
  /// the file lacks.
  SequentialBatchReader(std::shared_ptr<const TokenDataset> dataset, std::int64_t seq_len,
                        std::int64_t batch_size, std::int64_t num_batches, std::int64_t rank = 0,
                        std::int64_t world_size = 1,
                        config::Packing packing = config::Packing::kWindows,
                        config::LongDocuments long_documents = config::LongDocuments::kTruncate);

  std::int64_t num_batches() const { return num_batches_; }
  /// Rows of every batch this rank reads: batch_size / world_size.
  std::int64_t rows_per_rank() const { return rows_per_rank_; }

  /// This rank's rows of batch `k` (< num_batches()).
  TokenBatch batch(std::int64_t k) const;

 private:
  std::shared_ptr<const TokenDataset> dataset_;
  std::shared_ptr<const SampleSource> source_;
  std::int64_t seq_len_;
  std::int64_t batch_size_;
  std::int64_t num_batches_;
  std::int64_t rank_;
  std::int64_t rows_per_rank_;
};

}  // namespace nss::data

#include "data/sequential_reader.h"

#include <string>
#include <vector>

#include "core/error.h"
#include "data/dataset_checks.h"

namespace nss::data {

SequentialBatchReader::SequentialBatchReader(std::shared_ptr<const TokenDataset> dataset,
                                             std::int64_t seq_len, std::int64_t batch_size,
                                             std::int64_t num_batches, std::int64_t rank,
                                             std::int64_t world_size, config::Packing packing,
                                             config::LongDocuments long_documents)
    : dataset_(std::move(dataset)),
      seq_len_(seq_len),
      batch_size_(batch_size),
      num_batches_(num_batches),
      rank_(rank) {
  if (seq_len <= 0 || batch_size <= 0 || num_batches <= 0 || world_size <= 0 || rank < 0 ||
      rank >= world_size)
    throw UsageError("data",
                     "invalid evaluation shape: seq_len " + std::to_string(seq_len) +
                         ", batch size " + std::to_string(batch_size) + ", batches " +
                         std::to_string(num_batches),
                     "sizes must be positive");
  if (batch_size % world_size != 0)
    throw UsageError("data",
                     "evaluation batch size " + std::to_string(batch_size) +
                         " is not a multiple of the world size " + std::to_string(world_size),
                     "choose a batch size that the number of ranks divides");
  rows_per_rank_ = batch_size / world_size;
  source_ = make_sample_source(dataset_, {seq_len, packing, long_documents, /*shuffle=*/false, 0});
  if (packing != config::Packing::kWindows) {
    const std::int64_t rows = source_->samples_in_epoch(0);
    if (rows < batch_size * num_batches)
      throw DataError("data",
                      "token dataset " + dataset_->path() + " packs into " + std::to_string(rows) +
                          " rows of " + std::to_string(seq_len + 1) + " tokens (data.packing " +
                          config::choice_name(packing) + "), fewer than " +
                          std::to_string(num_batches) + " batches x " + std::to_string(batch_size),
                      "evaluate fewer batches (--batches, eval.batches), a smaller batch, or a "
                      "longer dataset");
    return;
  }
  const std::int64_t windows = num_windows(dataset_->num_tokens(), seq_len);
  if (windows < batch_size * num_batches)
    throw DataError("data",
                    "token dataset " + dataset_->path() + " holds " + std::to_string(windows) +
                        " windows of " + std::to_string(seq_len + 1) + " tokens, fewer than " +
                        std::to_string(num_batches) + " batches x " + std::to_string(batch_size) +
                        " (" +
                        std::to_string(tokens_for_windows(batch_size * num_batches, seq_len)) +
                        " tokens needed, " + std::to_string(dataset_->num_tokens()) + " present)",
                    "evaluate fewer batches (--batches, eval.batches), a smaller batch or "
                    "seq_len, or a longer dataset");
}

TokenBatch SequentialBatchReader::batch(std::int64_t k) const {
  NSS_ASSERT(k >= 0 && k < num_batches_, "data", "evaluation batch out of range");
  std::vector<std::int64_t> samples(static_cast<std::size_t>(rows_per_rank_));
  const std::int64_t first = k * batch_size_ + rank_ * rows_per_rank_;
  for (std::int64_t i = 0; i < rows_per_rank_; ++i) samples[i] = source_->sample_at(0, first + i);
  TokenBatch result;
  source_->read(std::move(samples), result);
  return result;
}

}  // namespace nss::data

// What a sample plan draws from: how many samples an epoch has, which sample
// stands at each position of the epoch's order, and how a sample is read.
// Two kinds (docs/data.md): fixed windows across documents, and rows of
// whole documents packed by a deterministic plan. Both are functions of
// (file, seed, epoch) alone, so a position (epoch, cursor) names the same
// samples at any world size.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "config/choices.h"
#include "data/token_batch.h"
#include "data/token_dataset.h"

namespace nss::data {

/// The samples of each epoch in their order (what SamplePlan needs).
class SampleOrder {
 public:
  virtual ~SampleOrder() = default;

  /// Samples in `epoch` (>= 0).
  virtual std::int64_t samples_in_epoch(std::int64_t epoch) const = 0;
  /// The identity of the sample at `position` (< samples_in_epoch) of the
  /// epoch's order: a window index, or an (epoch, row) code.
  virtual std::int64_t sample_at(std::int64_t epoch, std::int64_t position) const = 0;
  /// True when every epoch has the same number of samples.
  virtual bool same_size_every_epoch() const = 0;
  /// True when a sample is a row of whole documents (data.packing documents
  /// or none), false for a window: what messages call it.
  virtual bool packs_documents() const { return false; }
};

/// `size` samples per epoch, in the SamplePermutation(size, seed, epoch)
/// order, or in order 0..size-1 unshuffled.
class ShuffledOrder : public SampleOrder {
 public:
  ShuffledOrder(std::int64_t size, bool shuffle, std::uint64_t seed)
      : size_(size), shuffle_(shuffle), seed_(seed) {}
  std::int64_t samples_in_epoch(std::int64_t) const override { return size_; }
  std::int64_t sample_at(std::int64_t epoch, std::int64_t position) const override;
  bool same_size_every_epoch() const override { return true; }

 private:
  std::int64_t size_;
  bool shuffle_;
  std::uint64_t seed_;
};

class SampleSource : public SampleOrder {
 public:
  /// Fills `batch` with the samples `ids` (rows of seq_len + 1 tokens, their
  /// target mask, and for packed rows the positions and document segments).
  virtual void read(std::vector<std::int64_t> ids, TokenBatch& batch) const = 0;
  /// Tokens per row: seq_len + 1.
  virtual std::int64_t seq_len() const = 0;
};

/// How the source of a job is made.
struct SampleSourceOptions {
  std::int64_t seq_len = 0;
  config::Packing packing = config::Packing::kWindows;
  config::LongDocuments long_documents = config::LongDocuments::kTruncate;
  bool shuffle = true;  // false: file order (evaluation)
  std::uint64_t seed = 0;
};

/// The source `options` describe over `dataset`. DataError when packing needs
/// /document_offsets the file lacks.
std::shared_ptr<const SampleSource> make_sample_source(std::shared_ptr<const TokenDataset> dataset,
                                                       const SampleSourceOptions& options);

}  // namespace nss::data

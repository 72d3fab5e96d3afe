// The training dataloader of one rank: the micro-batches SamplePlan assigns
// to it, read from the memory-mapped dataset by data.num_workers threads into
// a bounded queue of prefetch_factor micro-batches per worker, handed out in
// order (the same stream whatever the thread timing or the worker count).
#pragma once

#include <cstdint>
#include <memory>

#include "data/ordered_prefetcher.h"
#include "data/sample_plan.h"
#include "data/token_batch.h"
#include "data/token_dataset.h"

namespace nss::data {

struct DataLoaderOptions {
  SamplingConfig sampling;
  config::Packing packing = config::Packing::kWindows;  // data.packing
  config::LongDocuments long_documents = config::LongDocuments::kTruncate;
  std::int64_t num_workers = 1;      // data.num_workers; 0 loads on the caller's thread
  std::int64_t prefetch_factor = 2;  // data.prefetch_factor: micro-batches queued per worker
  LoaderPosition start;              // {0, 0}, or state.data of the checkpoint resumed
  std::int64_t first_step = 0;       // step number of the first global batch
};

/// One micro-batch of this rank.
struct MicroBatch : TokenBatch {
  std::int64_t step = 0;         // optimizer step it belongs to
  std::int64_t micro_step = 0;   // 0 .. accumulation_steps - 1
  std::int64_t micro_steps = 0;  // accumulation_steps
  LoaderPosition position;       // position of its global batch
  LoaderPosition next_position;  // position of the global batch after it

  /// True for the last micro-batch of its step.
  bool last_micro_step() const { return micro_step + 1 == micro_steps; }
};

class DataLoader {
 public:
  /// Validates the batch arithmetic (UsageError), the dataset length and
  /// what packing needs (DataError), then starts the workers.
  DataLoader(std::shared_ptr<const TokenDataset> dataset, const DataLoaderOptions& options);
  /// Stops and joins the workers.
  ~DataLoader();
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  /// The next micro-batch in order; re-throws a worker's exception.
  MicroBatch next();

  /// Where a checkpoint taken now resumes: the first global batch whose
  /// micro-batches have not all been handed out by next().
  LoaderPosition resume_position() const { return resume_; }

  const SamplePlan& plan() const { return plan_; }

 private:
  MicroBatch produce(std::int64_t index) const;

  DataLoaderOptions options_;
  std::shared_ptr<const SampleSource> source_;
  SamplePlan plan_;
  LoaderPosition resume_;
  std::unique_ptr<OrderedPrefetcher<MicroBatch>> prefetcher_;
};

}  // namespace nss::data

// The training dataloader of one rank: the micro-batches SamplePlan assigns
// to it (shuffled fixed-size batches), or PoissonPlan with Poisson sampling
// (DP-SGD), read from the memory-mapped dataset by data.num_workers threads
// into a bounded queue of prefetch_factor micro-batches per worker, handed out
// in order (the same stream whatever the thread timing or the worker count).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "data/ordered_prefetcher.h"
#include "data/poisson_plan.h"
#include "data/poisson_schedule.h"
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
  /// Poisson sampling (privacy): one document per row, packing none with
  /// truncate only; the position is then {0, steps done} = {0, first_step - 1}.
  std::optional<PoissonSampling> poisson;
};

/// One micro-batch of this rank.
struct MicroBatch : TokenBatch {
  std::int64_t step = 0;            // optimizer step it belongs to
  std::int64_t micro_step = 0;      // 0 .. micro_steps - 1
  std::int64_t micro_steps = 0;     // of its step on every rank (Poisson: varies by step)
  std::int64_t global_samples = 0;  // samples in the step's global batch, all ranks
  LoaderPosition position;          // position of its global batch
  LoaderPosition next_position;     // position of the global batch after it

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

  /// The plan of fixed-size batches; InternalError with Poisson sampling.
  const SamplePlan& plan() const;
  /// The plan of Poisson sampling, or nullptr without it.
  const PoissonPlan* poisson_plan() const { return poisson_plan_.get(); }

 private:
  MicroBatch produce(std::int64_t index) const;
  MicroBatch produce_poisson(std::int64_t index) const;

  DataLoaderOptions options_;
  std::shared_ptr<const SampleSource> source_;
  std::optional<SamplePlan> plan_;
  std::shared_ptr<const PoissonPlan> poisson_plan_;
  std::unique_ptr<PoissonSchedule> schedule_;
  LoaderPosition resume_;
  std::unique_ptr<OrderedPrefetcher<MicroBatch>> prefetcher_;
};

}  // namespace nss::data

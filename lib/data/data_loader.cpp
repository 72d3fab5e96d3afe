#include "data/data_loader.h"

#include <string>

#include "core/error.h"

namespace nss::data {
namespace {

// Poisson sampling draws whole examples: a row must hold exactly one, whole
// or truncated, so that each example is clipped once.
const DataLoaderOptions& checked(const DataLoaderOptions& options) {
  if (!options.poisson) return options;
  if (options.packing != config::Packing::kNone)
    throw UsageError("data",
                     "Poisson sampling (privacy) draws whole examples, one per row, but "
                     "data.packing is " +
                         std::string(config::choice_name(options.packing)),
                     "set data.packing: none (each document of the token file is one example)");
  if (options.long_documents != config::LongDocuments::kTruncate)
    throw UsageError("data",
                     "Poisson sampling (privacy) needs data.long_documents: truncate, not split: "
                     "the pieces of a split example would each be clipped, doubling its "
                     "sensitivity",
                     "set data.long_documents: truncate (data.seq_len decides what is kept)");
  NSS_ASSERT(options.first_step >= 1, "data", "Poisson steps are numbered from 1");
  if (options.start != LoaderPosition{0, options.first_step - 1})
    throw DataError("data",
                    "the dataloader position (epoch " + std::to_string(options.start.epoch) +
                        ", cursor " + std::to_string(options.start.cursor) +
                        ") is not that of a Poisson-sampled run before step " +
                        std::to_string(options.first_step) + " (epoch 0, cursor " +
                        std::to_string(options.first_step - 1) + ")",
                    "resume a private run from its own checkpoints; the sampling cannot change "
                    "in the middle of a run");
  return options;
}

SampleSourceOptions source_options(const DataLoaderOptions& options) {
  // Poisson: unshuffled, so sample id d is document d (packed_source.h).
  return {options.sampling.seq_len, options.packing, options.long_documents,
          /*shuffle=*/!options.poisson, options.sampling.seed};
}

}  // namespace

DataLoader::DataLoader(std::shared_ptr<const TokenDataset> dataset,
                       const DataLoaderOptions& options)
    : options_(checked(options)),
      source_(make_sample_source(std::move(dataset), source_options(options))) {
  if (options.num_workers < 0)
    throw UsageError("data", "data.num_workers is " + std::to_string(options.num_workers),
                     "use 0 (load on the training thread) or more");
  if (options.prefetch_factor < 1)
    throw UsageError("data", "data.prefetch_factor is " + std::to_string(options.prefetch_factor),
                     "queue at least one micro-batch per worker");
  if (options.poisson) {
    if (options.sampling.seq_len <= 0)
      throw UsageError("data", "data.seq_len is " + std::to_string(options.sampling.seq_len),
                       "use a positive sequence length");
    poisson_plan_ = std::make_shared<const PoissonPlan>(
        *options.poisson, source_->samples_in_epoch(0), options.sampling);
    schedule_ = std::make_unique<PoissonSchedule>(poisson_plan_, options.first_step);
  } else {
    plan_.emplace(source_, options.sampling);
    options_.start = plan_->normalise(options.start);
  }
  resume_ = options_.start;
  prefetcher_ = std::make_unique<OrderedPrefetcher<MicroBatch>>(
      options.num_workers, options.num_workers * options.prefetch_factor,
      [this](std::int64_t index) { return produce(index); });
}

DataLoader::~DataLoader() = default;

const SamplePlan& DataLoader::plan() const {
  NSS_ASSERT(plan_.has_value(), "data", "a Poisson-sampling loader has no fixed-size plan");
  return *plan_;
}

MicroBatch DataLoader::produce(std::int64_t index) const {
  if (schedule_) return produce_poisson(index);
  const std::int64_t steps = plan_->accumulation_steps();
  const std::int64_t batch = index / steps;
  MicroBatch micro;
  micro.step = options_.first_step + batch;
  micro.micro_step = index % steps;
  micro.micro_steps = steps;
  micro.global_samples = options_.sampling.global_batch_size;
  micro.position = plan_->advance(options_.start, batch);
  micro.next_position = plan_->advance(options_.start, batch + 1);
  std::vector<std::int64_t> samples(static_cast<std::size_t>(options_.sampling.micro_batch_size));
  plan_->micro_batch(micro.position, micro.micro_step, samples.data());
  source_->read(std::move(samples), micro);
  return micro;
}

// The position counts the steps done: {0, s - 1} before step s, at any world size.
MicroBatch DataLoader::produce_poisson(std::int64_t index) const {
  const PoissonSchedule::Slot slot = schedule_->at(index);
  MicroBatch micro;
  micro.step = slot.step->step;
  micro.micro_step = slot.micro;
  micro.micro_steps = slot.step->micro_steps;
  micro.global_samples = slot.step->global_size;
  micro.position = {0, micro.step - 1};
  micro.next_position = {0, micro.step};
  source_->read(poisson_plan_->micro_batch(*slot.step, slot.micro), micro);
  return micro;
}

MicroBatch DataLoader::next() {
  MicroBatch micro = prefetcher_->next();
  resume_ = micro.last_micro_step() ? micro.next_position : micro.position;
  if (schedule_) schedule_->release_before(prefetcher_->delivered());
  return micro;
}

}  // namespace nss::data

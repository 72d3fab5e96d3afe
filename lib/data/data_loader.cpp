#include "data/data_loader.h"

#include <string>

#include "core/error.h"

namespace nss::data {

DataLoader::DataLoader(std::shared_ptr<const TokenDataset> dataset,
                       const DataLoaderOptions& options)
    : options_(options),
      source_(make_sample_source(std::move(dataset),
                                 {options.sampling.seq_len, options.packing, options.long_documents,
                                  /*shuffle=*/true, options.sampling.seed})),
      plan_(source_, options.sampling) {
  if (options.num_workers < 0)
    throw UsageError("data", "data.num_workers is " + std::to_string(options.num_workers),
                     "use 0 (load on the training thread) or more");
  if (options.prefetch_factor < 1)
    throw UsageError("data", "data.prefetch_factor is " + std::to_string(options.prefetch_factor),
                     "queue at least one micro-batch per worker");
  options_.start = plan_.normalise(options.start);
  resume_ = options_.start;
  prefetcher_ = std::make_unique<OrderedPrefetcher<MicroBatch>>(
      options.num_workers, options.num_workers * options.prefetch_factor,
      [this](std::int64_t index) { return produce(index); });
}

DataLoader::~DataLoader() = default;

MicroBatch DataLoader::produce(std::int64_t index) const {
  const std::int64_t steps = plan_.accumulation_steps();
  const std::int64_t batch = index / steps;
  MicroBatch micro;
  micro.step = options_.first_step + batch;
  micro.micro_step = index % steps;
  micro.micro_steps = steps;
  micro.position = plan_.advance(options_.start, batch);
  micro.next_position = plan_.advance(options_.start, batch + 1);
  std::vector<std::int64_t> samples(static_cast<std::size_t>(options_.sampling.micro_batch_size));
  plan_.micro_batch(micro.position, micro.micro_step, samples.data());
  source_->read(std::move(samples), micro);
  return micro;
}

MicroBatch DataLoader::next() {
  MicroBatch micro = prefetcher_->next();
  resume_ = micro.last_micro_step() ? micro.next_position : micro.position;
  return micro;
}

}  // namespace nss::data

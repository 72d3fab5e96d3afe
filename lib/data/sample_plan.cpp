#include "data/sample_plan.h"

#include <string>

#include "core/error.h"

namespace nss::data {
namespace {

constexpr int kMaxEpochsWithoutABatch = 100;

std::string text(std::int64_t value) {
  return std::to_string(value);
}

}  // namespace

SamplePlan::SamplePlan(std::int64_t num_windows, const SamplingConfig& config)
    : SamplePlan(std::make_shared<ShuffledOrder>(num_windows, true, config.seed), config) {}

SamplePlan::SamplePlan(std::shared_ptr<const SampleOrder> order, const SamplingConfig& config)
    : config_(config), order_(std::move(order)) {
  const auto& c = config;
  if (c.seq_len <= 0 || c.global_batch_size <= 0 || c.micro_batch_size <= 0 || c.world_size <= 0 ||
      c.rank < 0 || c.rank >= c.world_size)
    throw UsageError("data",
                     "invalid sampling shape: seq_len " + text(c.seq_len) + ", global batch " +
                         text(c.global_batch_size) + ", micro-batch " + text(c.micro_batch_size) +
                         ", rank " + text(c.rank) + " of " + text(c.world_size),
                     "sizes must be positive and rank < world size");
  if (c.global_batch_size % (c.micro_batch_size * c.world_size) != 0)
    throw UsageError("data",
                     "training.global_batch_size " + text(c.global_batch_size) +
                         " is not a multiple of training.micro_batch_size " +
                         text(c.micro_batch_size) + " x world size " + text(c.world_size),
                     "choose a global batch that micro_batch_size x ranks divides");
  rank_batch_size_ = c.global_batch_size / c.world_size;
  accumulation_steps_ = rank_batch_size_ / c.micro_batch_size;
  if (batches_per_epoch(0) >= 1) return;
  const bool rows = order_->packs_documents();
  throw DataError("data",
                  "the dataset holds " + text(order_->samples_in_epoch(0)) +
                      (rows ? " rows of packed documents" : " samples") + " of " +
                      text(c.seq_len + 1) + " tokens, fewer than one global batch of " +
                      text(c.global_batch_size),
                  rows ? "prepare more examples, or lower training.global_batch_size to at most " +
                             text(order_->samples_in_epoch(0))
                       : "prepare more text, or lower training.global_batch_size or data.seq_len");
}

std::int64_t SamplePlan::batches_per_epoch(std::int64_t epoch) const {
  return order_->samples_in_epoch(epoch) / config_.global_batch_size;
}

LoaderPosition SamplePlan::normalise(LoaderPosition position) const {
  if (position.epoch < 0 || position.cursor < 0)
    throw DataError("data",
                    "invalid dataloader position: epoch " + text(position.epoch) + ", cursor " +
                        text(position.cursor),
                    "the checkpoint's state.data is corrupt; resume from another step");
  // Positions are taken at global-batch boundaries inside the epoch: one
  // beyond the epoch's samples was saved over another dataset.
  if (position.cursor > order_->samples_in_epoch(position.epoch))
    throw DataError("data",
                    "the checkpoint's dataloader position (epoch " + text(position.epoch) +
                        ", cursor " + text(position.cursor) + ") lies beyond the " +
                        text(order_->samples_in_epoch(position.epoch)) + " samples epoch " +
                        text(position.epoch) +
                        " of this dataset holds: data.path is not the dataset the step was "
                        "trained on (or data.seq_len or the packing changed)",
                    "resume with the dataset the step was saved with (metadata.json "
                    "state.data.path and state.dataset), or start fresh in another "
                    "checkpoint.dir");
  // Packed epochs differ in size: one may hold no full batch at all.
  for (int skipped = 0;
       position.cursor + config_.global_batch_size > order_->samples_in_epoch(position.epoch);
       ++skipped) {
    if (skipped == kMaxEpochsWithoutABatch)
      throw DataError("data",
                      text(skipped) + " epochs in a row from epoch " +
                          text(position.epoch - skipped) + " pack fewer rows than one global batch",
                      "prepare more examples, or lower training.global_batch_size");
    ++position.epoch;
    position.cursor = 0;
  }
  return position;
}

LoaderPosition SamplePlan::advance(LoaderPosition start, std::int64_t batches) const {
  start = normalise(start);
  const std::int64_t global = config_.global_batch_size;
  for (;;) {
    const std::int64_t left_in_epoch =
        (order_->samples_in_epoch(start.epoch) - start.cursor) / global;
    if (batches < left_in_epoch) return {start.epoch, start.cursor + batches * global};
    batches -= left_in_epoch;
    start = normalise({start.epoch + 1, 0});
    if (order_->same_size_every_epoch()) {
      const std::int64_t per_epoch = batches_per_epoch(0);
      return {start.epoch + batches / per_epoch, (batches % per_epoch) * global};
    }
  }
}

std::vector<std::int64_t> SamplePlan::global_batch(LoaderPosition position) const {
  position = normalise(position);
  std::vector<std::int64_t> samples(static_cast<std::size_t>(config_.global_batch_size));
  for (std::int64_t i = 0; i < config_.global_batch_size; ++i)
    samples[i] = order_->sample_at(position.epoch, position.cursor + i);
  return samples;
}

void SamplePlan::micro_batch(LoaderPosition position, std::int64_t micro, std::int64_t* out) const {
  NSS_ASSERT(micro >= 0 && micro < accumulation_steps_, "data", "micro-step out of range");
  position = normalise(position);
  const std::int64_t first =
      position.cursor + config_.rank * rank_batch_size_ + micro * config_.micro_batch_size;
  for (std::int64_t i = 0; i < config_.micro_batch_size; ++i)
    out[i] = order_->sample_at(position.epoch, first + i);
}

}  // namespace nss::data

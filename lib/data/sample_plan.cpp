#include "data/sample_plan.h"

#include <string>

#include "core/error.h"
#include "data/sample_permutation.h"

namespace nss::data {
namespace {

std::string text(std::int64_t value) {
  return std::to_string(value);
}

}  // namespace

SamplePlan::SamplePlan(std::int64_t num_windows, const SamplingConfig& config)
    : config_(config), num_windows_(num_windows) {
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
  batches_per_epoch_ = num_windows / c.global_batch_size;
  if (batches_per_epoch_ < 1)
    throw DataError("data",
                    "the dataset holds " + text(num_windows) + " windows of " +
                        text(c.seq_len + 1) + " tokens, fewer than one global batch of " +
                        text(c.global_batch_size),
                    "prepare more text, or lower training.global_batch_size or data.seq_len");
}

LoaderPosition SamplePlan::normalise(LoaderPosition position) const {
  if (position.epoch < 0 || position.cursor < 0)
    throw DataError("data",
                    "invalid dataloader position: epoch " + text(position.epoch) + ", cursor " +
                        text(position.cursor),
                    "the checkpoint's state.data is corrupt; resume from another step");
  if (position.cursor + config_.global_batch_size > num_windows_) {
    ++position.epoch;
    position.cursor = 0;
  }
  return position;
}

LoaderPosition SamplePlan::advance(LoaderPosition start, std::int64_t batches) const {
  start = normalise(start);
  const std::int64_t global = config_.global_batch_size;
  const std::int64_t left_in_epoch = (num_windows_ - start.cursor) / global;
  if (batches < left_in_epoch) return {start.epoch, start.cursor + batches * global};
  const std::int64_t later = batches - left_in_epoch;
  return {start.epoch + 1 + later / batches_per_epoch_, (later % batches_per_epoch_) * global};
}

std::vector<std::int64_t> SamplePlan::global_batch(LoaderPosition position) const {
  position = normalise(position);
  const SamplePermutation order(static_cast<std::uint64_t>(num_windows_), config_.seed,
                                static_cast<std::uint64_t>(position.epoch));
  std::vector<std::int64_t> samples(static_cast<std::size_t>(config_.global_batch_size));
  for (std::int64_t i = 0; i < config_.global_batch_size; ++i)
    samples[i] = static_cast<std::int64_t>(order(static_cast<std::uint64_t>(position.cursor + i)));
  return samples;
}

void SamplePlan::micro_batch(LoaderPosition position, std::int64_t micro, std::int64_t* out) const {
  NSS_ASSERT(micro >= 0 && micro < accumulation_steps_, "data", "micro-step out of range");
  position = normalise(position);
  const SamplePermutation order(static_cast<std::uint64_t>(num_windows_), config_.seed,
                                static_cast<std::uint64_t>(position.epoch));
  const std::int64_t first =
      position.cursor + config_.rank * rank_batch_size_ + micro * config_.micro_batch_size;
  for (std::int64_t i = 0; i < config_.micro_batch_size; ++i)
    out[i] = static_cast<std::int64_t>(order(static_cast<std::uint64_t>(first + i)));
}

}  // namespace nss::data

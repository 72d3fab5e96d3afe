#include "data/poisson_plan.h"

#include <algorithm>
#include <string>

#include "core/error.h"
#include "data/token_batch.h"
#include "privacy/poisson_sampler.h"

namespace nss::data {
namespace {

std::string text(std::int64_t value) {
  return std::to_string(value);
}

// Units rank `rank` takes of a batch of `size`: positions rank, rank + world, ...
std::int64_t share_of(std::int64_t size, std::int64_t rank, std::int64_t world) {
  return size > rank ? (size - rank + world - 1) / world : 0;
}

}  // namespace

std::int64_t poisson_micro_steps(std::int64_t batch, std::int64_t world_size,
                                 std::int64_t micro_batch_size) {
  // Rank 0 holds the largest share; an empty batch still runs one micro-step
  // (all padding), so every rank takes part in the step's collectives.
  const std::int64_t most = share_of(batch, 0, world_size);
  return std::max<std::int64_t>(1, (most + micro_batch_size - 1) / micro_batch_size);
}

PoissonPlan::PoissonPlan(const PoissonSampling& sampling, std::int64_t units,
                         const SamplingConfig& shape)
    : sampling_(sampling),
      units_(units),
      micro_batch_size_(shape.micro_batch_size),
      rank_(shape.rank),
      world_size_(shape.world_size) {
  if (!(sampling.q > 0.0 && sampling.q <= 1.0))  // also rejects NaN
    throw UsageError(
        "data",
        "the Poisson sampling rate q = " + std::to_string(sampling.q) + " lies outside (0, 1]",
        "q is training.global_batch_size over the number of examples: lower the "
        "batch size or add examples");
  if (micro_batch_size_ <= 0 || world_size_ <= 0 || rank_ < 0 || rank_ >= world_size_)
    throw UsageError("data",
                     "invalid sampling shape: micro-batch " + text(micro_batch_size_) + ", rank " +
                         text(rank_) + " of " + text(world_size_),
                     "sizes must be positive and rank < world size");
  if (units_ <= 0 || units_ > privacy::kMaxPoissonUnits)
    throw DataError("data",
                    "Poisson sampling needs between 1 and " + text(privacy::kMaxPoissonUnits) +
                        " examples (documents), the dataset holds " + text(units_),
                    "prepare the dataset again with nss_prepare_data (one document per example)");
}

std::vector<std::int64_t> PoissonPlan::global_batch(std::int64_t step) const {
  NSS_ASSERT(step >= 0, "data", "negative training step " + text(step));
  return privacy::poisson_batch(sampling_.key, static_cast<std::uint64_t>(step), units_,
                                sampling_.q);
}

PoissonStep PoissonPlan::layout(std::int64_t step) const {
  const std::vector<std::int64_t> batch = global_batch(step);
  PoissonStep out;
  out.step = step;
  out.global_size = static_cast<std::int64_t>(batch.size());
  out.micro_steps = poisson_micro_steps(out.global_size, world_size_, micro_batch_size_);
  out.units.reserve(static_cast<std::size_t>(share_of(out.global_size, rank_, world_size_)));
  for (std::int64_t i = rank_; i < out.global_size; i += world_size_) out.units.push_back(batch[i]);
  return out;
}

std::vector<std::int64_t> PoissonPlan::micro_batch(const PoissonStep& layout,
                                                   std::int64_t micro) const {
  NSS_ASSERT(micro >= 0 && micro < layout.micro_steps, "data", "micro-step out of range");
  std::vector<std::int64_t> rows(static_cast<std::size_t>(micro_batch_size_), kPaddingRow);
  const auto held = static_cast<std::int64_t>(layout.units.size());
  for (std::int64_t r = 0, i = micro * micro_batch_size_; r < micro_batch_size_ && i < held;
       ++r, ++i)
    rows[r] = layout.units[i];
  return rows;
}

}  // namespace nss::data

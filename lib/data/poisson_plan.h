// Poisson-sampled global batches for DP-SGD (docs/data.md, "Poisson sampling").
//
// Step s's global batch is privacy::poisson_batch(key, s, units, q): every
// privacy unit (document) joins independently with probability q, so its size
// varies and may be 0. Every rank draws the whole batch itself (no
// communication) and takes its units at positions rank, rank + world_size,
// ... of the ascending list: counts differ by at most one, and interleaving
// spreads files sorted by length or group evenly over the ranks. Every rank
// runs the same number of micro-batches, the most any rank needs (at least
// one), its last rows padding, because each micro-step's gathers are
// collective. A batch is never truncated: that would break the guarantee.
// All of it is a function of (key, step), so a resume at any world size
// continues with the same batches.
#pragma once

#include <cstdint>
#include <vector>

#include "data/sample_plan.h"
#include "privacy/secret_key.h"

namespace nss::data {

/// What turns Poisson sampling on (DataLoaderOptions::poisson).
struct PoissonSampling {
  privacy::PoissonKey key;  // SecretKey::poisson_key() of the run
  double q = 0;             // each unit's inclusion probability, in (0, 1]
};

/// Micro-steps every rank runs for a Poisson step of `batch` units: the
/// largest share, ceil(batch / world_size), in micro-batches of
/// `micro_batch_size`, at least one (an empty batch still steps).
std::int64_t poisson_micro_steps(std::int64_t batch, std::int64_t world_size,
                                 std::int64_t micro_batch_size);

/// One rank's part of one Poisson step.
struct PoissonStep {
  std::int64_t step = 0;            // the training step (1-based) that drew it
  std::int64_t global_size = 0;     // units in the whole batch, all ranks
  std::int64_t micro_steps = 1;     // micro-batches every rank runs
  std::vector<std::int64_t> units;  // this rank's units, ascending
};

class PoissonPlan {
 public:
  /// Over `units` units, with the micro-batch size, rank and world size of
  /// `sampling` (its seq_len, global_batch_size and seed play no part).
  /// UsageError for q outside (0, 1] or an invalid shape, DataError for no
  /// units or more than the sampler covers.
  PoissonPlan(const PoissonSampling& sampling, std::int64_t units, const SamplingConfig& shape);

  std::int64_t units() const { return units_; }
  double q() const { return sampling_.q; }

  /// The ascending units of step `step`'s global batch (every rank's).
  std::vector<std::int64_t> global_batch(std::int64_t step) const;
  /// This rank's share of step `step` and the micro-steps of every rank.
  PoissonStep layout(std::int64_t step) const;
  /// The unit of each row of micro-batch `micro` (< layout.micro_steps):
  /// micro_batch_size entries, kPaddingRow once this rank's units run out.
  std::vector<std::int64_t> micro_batch(const PoissonStep& layout, std::int64_t micro) const;

 private:
  PoissonSampling sampling_;
  std::int64_t units_;
  std::int64_t micro_batch_size_;
  std::int64_t rank_;
  std::int64_t world_size_;
};

}  // namespace nss::data

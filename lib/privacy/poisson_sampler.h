// Poisson sampling for DP-SGD: at each step every privacy unit joins the
// batch independently with probability q = B / n, decided by the secret
// key's Poisson stream at (step, unit index). The batch is a pure function of
// (key, step, n, q): every rank and every world size sees the same units.
// Its size is random and may be 0; the step then adds noise only.
#pragma once

#include <cstdint>
#include <vector>

#include "privacy/secret_key.h"

namespace nss::privacy {

/// Units per step the stream covers: 2^32 ChaCha20 blocks of 8 uniforms.
inline constexpr std::int64_t kMaxPoissonUnits = std::int64_t{1} << 35;

/// The ascending indices of the units in [0, units) that join step `step`'s
/// batch. Throws UsageError unless 0 <= q <= 1, InternalError unless
/// 0 <= units <= kMaxPoissonUnits.
std::vector<std::int64_t> poisson_batch(const PoissonKey& key, std::uint64_t step,
                                        std::int64_t units, double q);

/// The expected batch size, q * units.
double poisson_expected_batch(std::int64_t units, double q);

/// The smallest k with P(batch size > k) <= p, the batch size being
/// Binomial(units, q); 0 < p < 0.5. Exact up to double rounding (log-space
/// tail sums), for sizing buffers that a batch overflows with probability p.
std::int64_t poisson_batch_bound(std::int64_t units, double q, double p);

}  // namespace nss::privacy

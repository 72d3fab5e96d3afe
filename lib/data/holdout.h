// The holdout: rows of a records table set aside before it is tokenised, so
// that the evaluation of synthetic data (nss_evaluate) can compare the
// training rows with rows the model never saw. Sizes follow NeMo Safe
// Synthesizer's holdout (5% by default, at most 2,000 rows, at least 10 rows
// out of a table of at least 200); a group (--group-by) is never split, and
// neither are identical rows, so no holdout row is also a training row.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nss::data {

inline constexpr double kDefaultHoldoutFraction = 0.05;
inline constexpr std::int64_t kDefaultMaxHoldoutRows = 2000;
inline constexpr std::int64_t kMinHoldoutRows = 10;
inline constexpr std::int64_t kMinRowsForHoldout = 200;

struct HoldoutOptions {
  std::string size;  // --holdout: "" or "0" none; below 1 a fraction of the rows, else a count
  std::int64_t max_rows = kDefaultMaxHoldoutRows;
  std::uint64_t seed = 0;
};

/// The rows `options` asks to hold out of `rows`: a fraction truncated to
/// whole rows, or a count, then capped at max_rows. UsageError for a size
/// that is not a number, negative, or a fraction at or above 1 written with
/// a point ("1.5": a count is a whole number), and for max_rows below 0.
std::int64_t holdout_target(const HoldoutOptions& options, std::int64_t rows);

/// Which rows are held out.
struct HoldoutSplit {
  std::vector<bool> held_out;  // per row; empty: no holdout
  std::int64_t target = 0;     // rows aimed at
  std::int64_t rows = 0;       // rows held out
  std::int64_t groups = 0;     // groups those rows form
  std::string warning;         // why there is no holdout, when it was asked for
};

/// Splits rows whose group is `group_keys[i]` (rows with equal keys stay
/// together): the groups in the order of a permutation seeded by
/// options.seed, each taken when it brings the held-out count closer to the
/// target. No holdout (and a warning with the numbers) when the table has
/// fewer than kMinRowsForHoldout rows, the target is below kMinHoldoutRows,
/// or every row would be held out.
HoldoutSplit split_holdout(const std::vector<std::string>& group_keys,
                           const HoldoutOptions& options);

}  // namespace nss::data

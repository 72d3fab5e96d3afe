#include "data/holdout.h"

#include <cmath>
#include <cstdlib>
#include <map>

#include "core/error.h"
#include "data/sample_permutation.h"

namespace nss::data {
namespace {

// The permutation's epoch slot: the holdout's own stream, apart from the
// epochs a training run shuffles with the same seed.
constexpr std::uint64_t kHoldoutStream = 0x686f6c646f7574ULL;  // "holdout"

UsageError bad_size(const std::string& text, const std::string& why) {
  return UsageError("data", "--holdout " + text + ": " + why,
                    "give a fraction below 1 (0.05 holds out 5% of the rows) or a whole number "
                    "of rows (500)");
}

}  // namespace

std::int64_t holdout_target(const HoldoutOptions& options, std::int64_t rows) {
  if (options.max_rows < 0)
    throw UsageError("data", "--max-holdout " + std::to_string(options.max_rows),
                     "give the most rows to hold out, 0 or more");
  const std::string& text = options.size;
  if (text.empty()) return 0;
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !std::isfinite(value) || errno == ERANGE)
    throw bad_size(text, "not a number");
  if (value < 0) throw bad_size(text, "negative");
  double wanted = value;
  if (value < 1) {
    wanted = std::floor(value * static_cast<double>(rows));
  } else if (value != std::floor(value)) {
    throw bad_size(text, "a count of rows is a whole number");
  }
  return static_cast<std::int64_t>(std::min(wanted, static_cast<double>(options.max_rows)));
}

HoldoutSplit split_holdout(const std::vector<std::string>& group_keys,
                           const HoldoutOptions& options) {
  HoldoutSplit split;
  const auto rows = static_cast<std::int64_t>(group_keys.size());
  split.target = holdout_target(options, rows);  // checks the size first
  if (options.size.empty() || std::strtod(options.size.c_str(), nullptr) == 0) return split;
  const std::string asked = "--holdout " + options.size + " of " + std::to_string(rows) + " rows";
  if (rows < kMinRowsForHoldout) {
    split.warning = asked + ": no holdout, the table has fewer than " +
                    std::to_string(kMinRowsForHoldout) +
                    " rows (too few to tell a held-out row from a training row); training on "
                    "all of them";
    return split;
  }
  if (split.target < kMinHoldoutRows) {
    split.warning = asked + " is " + std::to_string(split.target) + " rows, fewer than " +
                    std::to_string(kMinHoldoutRows) +
                    ": no holdout; raise --holdout (or --max-holdout) to evaluate against one";
    return split;
  }
  // Groups in order of first appearance, each with its rows.
  std::map<std::string, std::size_t> index;
  std::vector<std::vector<std::size_t>> groups;
  for (std::size_t r = 0; r < group_keys.size(); ++r) {
    const auto [at, added] = index.emplace(group_keys[r], groups.size());
    if (added) groups.emplace_back();
    groups[at->second].push_back(r);
  }
  const SamplePermutation order(groups.size(), options.seed, kHoldoutStream);
  std::vector<bool> held(group_keys.size(), false);
  for (std::uint64_t position = 0; position < groups.size() && split.rows != split.target;
       ++position) {
    const auto& members = groups[order(position)];
    const auto with = split.rows + static_cast<std::int64_t>(members.size());
    if (std::llabs(with - split.target) >= std::llabs(split.rows - split.target)) continue;
    for (const std::size_t r : members) held[r] = true;
    split.rows = with;
    ++split.groups;
  }
  if (split.rows == rows || split.rows == 0) {
    split.warning = asked + ": no holdout, the " + std::to_string(groups.size()) +
                    " groups of rows cannot be split near " + std::to_string(split.target) +
                    " held-out rows with training rows left";
    split.rows = split.groups = 0;
    return split;
  }
  split.held_out = std::move(held);
  return split;
}

}  // namespace nss::data

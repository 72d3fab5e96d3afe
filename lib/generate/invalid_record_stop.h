// When to give up on a model that writes invalid records: after each batch of
// completions, the running invalid fraction (every record judged so far)
// above `threshold` for `patience` batches in a row ends generation. The
// names and defaults are NeMo Safe Synthesizer's (invalid_fraction_threshold
// 0.8, patience 1).
#pragma once

#include <cstdint>

namespace nss::generate {

class InvalidRecordStop {
 public:
  /// Throws UsageError unless threshold is in [0, 1] and patience >= 1.
  InvalidRecordStop(double threshold, std::int64_t patience);

  /// Counts one batch's records; true when generation must stop.
  bool after_batch(std::int64_t valid, std::int64_t invalid);

  /// Invalid records over all records judged so far (0 before any).
  double invalid_fraction() const;
  std::int64_t valid() const { return valid_; }
  std::int64_t invalid() const { return invalid_; }

 private:
  double threshold_;
  std::int64_t patience_;
  std::int64_t valid_ = 0, invalid_ = 0;
  std::int64_t batches_above_ = 0;
};

}  // namespace nss::generate

#include "generate/invalid_record_stop.h"

#include <string>

#include "core/error.h"

namespace nss::generate {

InvalidRecordStop::InvalidRecordStop(double threshold, std::int64_t patience)
    : threshold_(threshold), patience_(patience) {
  if (!(threshold >= 0 && threshold <= 1))
    throw UsageError(
        "generate",
        "--invalid-fraction-threshold must be in [0, 1], got " + std::to_string(threshold),
        "0.8 stops when more than 80% of the records so far are invalid");
  if (patience < 1)
    throw UsageError("generate", "--patience must be >= 1, got " + std::to_string(patience),
                     "1 stops at the first batch above the threshold");
}

bool InvalidRecordStop::after_batch(std::int64_t valid, std::int64_t invalid) {
  valid_ += valid;
  invalid_ += invalid;
  batches_above_ = invalid_fraction() > threshold_ ? batches_above_ + 1 : 0;
  return batches_above_ >= patience_;
}

double InvalidRecordStop::invalid_fraction() const {
  const std::int64_t judged = valid_ + invalid_;
  return judged == 0 ? 0.0 : static_cast<double>(invalid_) / static_cast<double>(judged);
}

}  // namespace nss::generate

#include "privacy/accounting_inputs.h"

#include <cmath>
#include <sstream>
#include <string>

#include "core/error.h"

namespace nss::privacy {
std::string number_text(double value, int digits) {
  std::ostringstream out;
  out.precision(digits);
  out << value;
  return out.str();
}

namespace {

std::string text(double value) {
  return number_text(value, 17);
}

}  // namespace

void check_accounting_inputs(double sampling_rate, double noise_multiplier, std::int64_t steps,
                             double delta) {
  if (!(sampling_rate > 0.0 && sampling_rate <= 1.0))
    throw UsageError("privacy", "sampling rate q = " + text(sampling_rate) + " is outside (0, 1]",
                     "q is the expected batch size over the dataset size (1 for full batches)");
  if (!(noise_multiplier >= 0.0 && std::isfinite(noise_multiplier)))
    throw UsageError("privacy", "noise multiplier " + text(noise_multiplier) + " is not >= 0",
                     "the noise multiplier is the noise standard deviation over the clipping norm");
  if (steps < 0)
    throw UsageError("privacy", "step count " + std::to_string(steps) + " is negative",
                     "count the optimizer steps taken so far, from 0");
  if (!(delta > 0.0 && delta < 1.0))
    throw UsageError("privacy", "delta = " + text(delta) + " is outside (0, 1)",
                     "use a delta well below 1 / dataset size, e.g. 1e-5");
}

void check_target_epsilon(double target_epsilon) {
  if (!(target_epsilon > 0.0 && std::isfinite(target_epsilon)))
    throw UsageError("privacy", "target epsilon " + text(target_epsilon) + " is not positive",
                     "set a finite privacy budget above 0, e.g. 8");
}

}  // namespace nss::privacy

// Checks of what every accountant is asked: one step of DP-SGD is the
// Poisson-subsampled Gaussian mechanism with sampling rate q and noise
// multiplier sigma, run `steps` times, and epsilon is asked at some delta.
#pragma once

#include <cstdint>
#include <string>

namespace nss::privacy {

/// Throws nss::UsageError unless q is in (0, 1], sigma >= 0 (0 is no noise:
/// epsilon is infinite), steps >= 0 and delta in (0, 1), all finite.
void check_accounting_inputs(double sampling_rate, double noise_multiplier, std::int64_t steps,
                             double delta);

/// Throws nss::UsageError unless the target epsilon is finite and positive.
void check_target_epsilon(double target_epsilon);

/// `value` in the accountants' messages, with `digits` significant digits.
std::string number_text(double value, int digits);

}  // namespace nss::privacy

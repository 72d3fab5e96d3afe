#include "optim/lr_schedule.h"

#include <algorithm>
#include <cmath>

namespace nss::optim {

LrSchedule::LrSchedule(LrScheduleOptions options) : options_(options) {}

double LrSchedule::at(std::int64_t step) const {
  const auto& o = options_;
  if (step <= o.warmup_steps && o.warmup_steps > 0)
    return o.lr * static_cast<double>(step) / static_cast<double>(o.warmup_steps);
  if (o.kind == config::LrSchedule::kConstant) return o.lr;
  const std::int64_t decay_steps = o.max_steps - o.warmup_steps;
  if (decay_steps <= 0) return o.lr;
  const double progress = std::clamp(
      static_cast<double>(step - o.warmup_steps) / static_cast<double>(decay_steps), 0.0, 1.0);
  if (o.kind == config::LrSchedule::kLinear) return o.lr - (o.lr - o.min_lr) * progress;
  return o.min_lr + 0.5 * (o.lr - o.min_lr) * (1.0 + std::cos(M_PI * progress));
}

}  // namespace nss::optim

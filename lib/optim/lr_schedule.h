// Learning rate per optimizer step: linear warmup from 0 to `lr`, then
// cosine, linear or constant decay to `min_lr` at `max_steps`.
#pragma once

#include <cstdint>

#include "config/choices.h"

namespace nss::optim {

struct LrScheduleOptions {
  double lr = 3e-4;
  double min_lr = 0;
  std::int64_t warmup_steps = 0;
  std::int64_t max_steps = 1;
  config::LrSchedule kind = config::LrSchedule::kCosine;
};

class LrSchedule {
 public:
  explicit LrSchedule(LrScheduleOptions options);

  /// Learning rate of optimizer step `step` (1-based): lr * step / warmup
  /// during warmup (so step 1 never has lr 0), then the decay, reaching
  /// min_lr at max_steps and staying there.
  double at(std::int64_t step) const;

 private:
  LrScheduleOptions options_;
};

}  // namespace nss::optim

// The micro-batch stream of Poisson steps: the loader's micro-batch index i
// (0, 1, 2, ... from its first step) names a (step, micro-step). Steps run
// different numbers of micro-steps, so where a step starts in the stream is
// known only once every earlier step is drawn: steps are laid out in order as
// the indices reach them, under a lock (the loader's workers ask
// concurrently), and dropped once all their micro-batches were delivered.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>

#include "data/poisson_plan.h"

namespace nss::data {

class PoissonSchedule {
 public:
  struct Slot {
    std::shared_ptr<const PoissonStep> step;
    std::int64_t micro = 0;  // micro-step inside it
  };

  /// Index 0 is micro-step 0 of step `first_step`.
  PoissonSchedule(std::shared_ptr<const PoissonPlan> plan, std::int64_t first_step);

  /// The step and micro-step of micro-batch `index` (not yet released).
  Slot at(std::int64_t index);
  /// Forgets the steps that end at or before `index`: no one asks for them again.
  void release_before(std::int64_t index);

 private:
  struct Entry {
    std::int64_t first_index = 0;  // of its micro-step 0
    std::shared_ptr<const PoissonStep> step;
  };

  std::shared_ptr<const PoissonPlan> plan_;
  std::mutex mutex_;
  std::deque<Entry> steps_;  // consecutive steps, never empty
};

}  // namespace nss::data

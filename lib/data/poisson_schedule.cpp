#include "data/poisson_schedule.h"

#include <string>

#include "core/error.h"

namespace nss::data {

PoissonSchedule::PoissonSchedule(std::shared_ptr<const PoissonPlan> plan, std::int64_t first_step)
    : plan_(std::move(plan)) {
  steps_.push_back({0, std::make_shared<const PoissonStep>(plan_->layout(first_step))});
}

PoissonSchedule::Slot PoissonSchedule::at(std::int64_t index) {
  std::lock_guard<std::mutex> lock(mutex_);
  NSS_ASSERT(index >= steps_.front().first_index, "data",
             "micro-batch " + std::to_string(index) + " was already released");
  // Drawn under the lock: a step's place depends on all steps before it.
  while (index >= steps_.back().first_index + steps_.back().step->micro_steps) {
    const std::int64_t first = steps_.back().first_index + steps_.back().step->micro_steps;
    const std::int64_t step = steps_.back().step->step + 1;
    steps_.push_back({first, std::make_shared<const PoissonStep>(plan_->layout(step))});
  }
  for (auto entry = steps_.rbegin();; ++entry)
    if (entry->first_index <= index) return {entry->step, index - entry->first_index};
}

void PoissonSchedule::release_before(std::int64_t index) {
  std::lock_guard<std::mutex> lock(mutex_);
  while (steps_.size() > 1 &&
         steps_.front().first_index + steps_.front().step->micro_steps <= index)
    steps_.pop_front();
}

}  // namespace nss::data

#include "train/step_metrics.h"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/units.h"

namespace nss::train {
namespace {}  // namespace

nlohmann::json to_json(const MemoryRecord& r) {
  nlohmann::json out = {{"event", "memory"},
                        {"masters_bytes", r.state.masters},
                        {"gradients_bytes", r.state.gradients},
                        {"optimizer_bytes", r.state.moments},
                        {"frozen_bytes", r.state.frozen},
                        {"quantized_base_bytes", r.state.quantized_base},
                        {"model_state_bytes", r.state.model_state()},
                        {"largest_gathered_unit_bytes", r.state.largest_gathered_unit},
                        {"measured_tensor_bytes", r.measured_tensor_bytes}};
  if (r.state.offloaded_host > 0) {  // parallel.offload_optimizer
    out["offloaded_host_bytes"] = r.state.offloaded_host;
    out["compute_shard_bytes"] = r.state.compute_shards;
  }
  return out;
}

std::string log_line(const MemoryRecord& r) {
  const std::string offloaded =
      r.state.offloaded_host > 0
          ? fmt::format(
                "; offloaded to host: masters and moments {}, on the device their "
                "compute-dtype copy {}",
                format_bytes(r.state.offloaded_host), format_bytes(r.state.compute_shards))
          : std::string();
  return fmt::format(
      "model state on this rank: masters {}, gradients {} (during backward), AdamW moments {}, "
      "frozen base {} (NF4 {}); largest gathered unit {}; tensors now {}{}",
      format_bytes(r.state.masters), format_bytes(r.state.gradients), format_bytes(r.state.moments),
      format_bytes(r.state.frozen), format_bytes(r.state.quantized_base),
      format_bytes(r.state.largest_gathered_unit), format_bytes(r.measured_tensor_bytes),
      offloaded);
}

nlohmann::json to_json(const StepRecord& r) {
  nlohmann::json out = {{"step", r.step},
                        {"loss", r.outcome.loss},
                        {"lr", r.outcome.lr},
                        {"grad_norm", r.outcome.grad_norm},
                        {"target_tokens", r.outcome.target_tokens},
                        {"tokens_per_s", r.tokens_per_s},
                        {"step_time_s", r.step_time_s},
                        {"mem_bytes", r.mem_bytes},
                        {"peak_mem_bytes", r.peak_mem_bytes},
                        {"comm_bytes", r.comm_bytes},
                        {"skipped", r.outcome.skipped},
                        {"skipped_steps", r.skipped_steps}};
  if (r.epsilon) out["epsilon"] = *r.epsilon;
  return out;
}

std::string log_line(const StepRecord& r) {
  return fmt::format(
             "step {}/{} | loss {:.4f} | lr {:.2e} | grad {:.3f} | {} targets | {:.0f} tok/s | "
             "{:.3f} s/step | mem {} (peak {}) | ETA {}",
             r.step, r.max_steps, r.outcome.loss, r.outcome.lr, r.outcome.grad_norm,
             r.outcome.target_tokens, r.tokens_per_s, r.step_time_s, format_bytes(r.mem_bytes),
             format_bytes(r.peak_mem_bytes), format_duration(r.eta_s)) +
         (r.epsilon ? fmt::format(" | epsilon {:.3f}", *r.epsilon) : std::string());
}

StepMetrics::StepMetrics(std::vector<comm::Communicator*> comms, memory::MemoryMeter& meter,
                         std::int64_t tokens_per_step, std::int64_t first_step,
                         std::int64_t max_steps)
    : meter_(meter),
      tokens_per_step_(tokens_per_step),
      first_step_(first_step),
      max_steps_(max_steps),
      run_start_(Clock::now()) {
  for (comm::Communicator* comm : comms)
    if (comm && std::find(comms_.begin(), comms_.end(), comm) == comms_.end())
      comms_.push_back(comm);
  meter_.reset_peak();
}

void StepMetrics::begin_step() {
  step_start_ = Clock::now();
  before_.clear();
  for (const comm::Communicator* comm : comms_) before_.push_back(comm->stats());
}

StepRecord StepMetrics::end_step(std::int64_t step, const StepOutcome& outcome,
                                 std::int64_t skipped_steps) const {
  StepRecord r;
  r.step = step;
  r.max_steps = max_steps_;
  r.outcome = outcome;
  r.step_time_s = std::chrono::duration<double>(Clock::now() - step_start_).count();
  r.tokens_per_s = static_cast<double>(tokens_per_step_) / r.step_time_s;
  r.mem_bytes = meter_.bytes_now();
  r.peak_mem_bytes = meter_.peak_bytes();
  for (std::size_t i = 0; i < comms_.size(); ++i)
    r.comm_bytes += comms_[i]->stats().since(before_[i]).total_bytes();
  r.skipped_steps = skipped_steps;
  r.eta_s = elapsed_s() / static_cast<double>(step - first_step_ + 1) *
            static_cast<double>(max_steps_ - step);
  return r;
}

double StepMetrics::elapsed_s() const {
  return std::chrono::duration<double>(Clock::now() - run_start_).count();
}

}  // namespace nss::train

// What training reports, as typed records made once and then written twice —
// as the console line and as the metrics.jsonl object: the model state at
// start-up, and every logged step (loss, learning rate, gradient norm,
// throughput, step time, memory, traffic, ETA). StepMetrics measures a step
// (time, bytes over every communicator, the device's memory) around it.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "comm/communicator.h"
#include "memory/memory_meter.h"
#include "train/sharded_state.h"
#include "train/training_step.h"

namespace nss::train {

/// This rank's model state by category next to what its meter measures:
/// the 1/N of FSDP made visible (metrics.jsonl's "memory" event).
struct MemoryRecord {
  ShardedState::Bytes state;
  std::int64_t measured_tensor_bytes = 0;
};
nlohmann::json to_json(const MemoryRecord& record);
std::string log_line(const MemoryRecord& record);

/// One logged step.
struct StepRecord {
  std::int64_t step = 0, max_steps = 0;
  StepOutcome outcome;
  double tokens_per_s = 0, step_time_s = 0;
  std::int64_t mem_bytes = 0, peak_mem_bytes = 0;
  double comm_bytes = 0;  // this step's, every communicator (nccl-tests bus bytes)
  std::int64_t skipped_steps = 0;
  double eta_s = 0;
  std::optional<double> epsilon;  // privacy spent after this step (private runs)
};
nlohmann::json to_json(const StepRecord& record);
std::string log_line(const StepRecord& record);

class StepMetrics {
 public:
  /// `comms`: every communicator the step uses (the host's, the shard and
  /// replica groups'); one listed twice counts once.
  StepMetrics(std::vector<comm::Communicator*> comms, memory::MemoryMeter& meter,
              std::int64_t tokens_per_step, std::int64_t first_step, std::int64_t max_steps);

  /// Right before a step: its start time and traffic so far.
  void begin_step();
  /// The record of the step that just ran.
  StepRecord end_step(std::int64_t step, const StepOutcome& outcome,
                      std::int64_t skipped_steps) const;
  /// Seconds since the first step began.
  double elapsed_s() const;

 private:
  using Clock = std::chrono::steady_clock;
  std::vector<comm::Communicator*> comms_;  // distinct
  memory::MemoryMeter& meter_;
  std::int64_t tokens_per_step_, first_step_, max_steps_;
  Clock::time_point run_start_, step_start_;
  std::vector<comm::CommStats> before_;  // by comms_
};

}  // namespace nss::train

// The preflight's measured synthetic step: rank 0 alone builds its own copy
// of the sharded model and optimizer state on a LocalCommunicator(world_size)
// (the same shard, gather and gradient buffers as one rank of the real job),
// runs full optimizer steps on synthetic tokens, reads the device's peak and
// destroys everything. Nothing of the job's own state is touched: the real
// model, optimizer and dataloader do not exist yet or are never referenced,
// tokens come from arithmetic, not from the dataloader or a random generator.
// A private run's step (privacy.enabled) is DP-SGD's (train/private_step.h),
// its noise keyed by a fixed synthetic key: the run's key is never drawn here.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "config/config.h"
#include "memory/memory_meter.h"
#include "plan/run_plan.h"

namespace nss::train {

struct SyntheticStepRequest {
  std::int64_t micro_batch_size = 1;
  std::int64_t micro_steps = 1;  // micro-batches per optimizer step (gradient accumulation)
  std::int64_t steps = 2;        // full optimizer steps, at least 2; the last one's peak counts
  /// Tensor bytes above the level before the model was built at which
  /// allocations fail (0: no limit), so a step that does not fit ends with
  /// ResourceError instead of the kernel's OOM killer.
  std::int64_t limit_bytes = 0;
  /// Packed rows (data.packing documents/none): every row laid out in these
  /// attention spans (the training data's costliest row); empty: one
  /// document filling the row, the costliest layout there is.
  std::vector<std::int64_t> packed_row_spans;
};

struct SyntheticStepResult {
  std::int64_t peak_bytes = 0;  // peak of the last step, above the level before the model was built
  std::vector<std::int64_t> step_peak_bytes;  // every step's peak, same reference
  std::vector<double> step_seconds;           // every step's duration (device work included)
  double seconds = 0;
};

/// Rank 0's own sharded model and optimizer state, for measuring. Building
/// and running it throw ResourceError (exit 3) when they run out of memory
/// (std::bad_alloc, a libtorch out-of-memory error, or the limit).
class SyntheticTraining {
 public:
  /// Builds the model with synthetic weights and zeroed optimizer state for
  /// one rank of `plan`'s world, as `plan` runs it on the meter's device;
  /// `limit_bytes` as in SyntheticStepRequest.
  SyntheticTraining(const config::Config& config, const plan::RunPlan& plan,
                    memory::MemoryMeter& meter, std::int64_t limit_bytes = 0);
  /// The same under the job's plan for one rank of `world_size`
  /// (plan::make_run_plan on the meter's device).
  SyntheticTraining(const config::Config& config, int world_size, memory::MemoryMeter& meter,
                    std::int64_t limit_bytes = 0);
  ~SyntheticTraining();
  SyntheticTraining(const SyntheticTraining&) = delete;
  SyntheticTraining& operator=(const SyntheticTraining&) = delete;

  /// Parameters of the built model, summed over its units' flat layouts
  /// (unpadded; a tied embedding once; under tensor parallelism each part
  /// counted for the whole tensor it is a part of).
  std::int64_t parameters() const;
  std::int64_t trainable_parameters() const;
  /// Model shards and optimizer state, measured right after building.
  std::int64_t state_bytes() const { return state_bytes_; }

  /// Runs request.steps full optimizer steps on synthetic tokens.
  SyntheticStepResult run(const SyntheticStepRequest& request);

 private:
  struct Parts;
  std::int64_t whole_parameters(bool trainable_only) const;
  // One optimizer step: DP-SGD's when privacy is on, else the usual.
  void run_step(const SyntheticStepRequest& request, std::int64_t step);

  const config::Config config_;
  memory::MemoryMeter& meter_;
  std::int64_t start_bytes_ = 0;
  std::int64_t state_bytes_ = 0;
  std::unique_ptr<Parts> parts_;
};

/// Builds, runs and destroys a SyntheticTraining (see the file comment).
SyntheticStepResult run_synthetic_step(const config::Config& config, int world_size,
                                       const SyntheticStepRequest& request,
                                       memory::MemoryMeter& meter);

}  // namespace nss::train

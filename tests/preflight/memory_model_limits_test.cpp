// The memory model at micro-batches far beyond the configured one (the
// budget search probes every divisor of a rank's share): a size whose
// tensors would leave 64-bit byte counts reads as more than any rank has,
// never as a wrapped, small number.
#include <cstdint>
#include <limits>

#include <gtest/gtest.h>

#include "config/config.h"
#include "preflight/memory_model.h"

namespace nss::preflight {
namespace {

TEST(MemoryModelLimits, HugeMicroBatchesAreBeyondAnyRankNotWrapped) {
  const config::Config config;  // the tiny model, seq_len 128
  const StepMemory configured = predict_step_memory(config, 1, DeviceKind::kCpu, 2);
  const StepMemory large = predict_step_memory(config, 1, DeviceKind::kCpu, 65536);
  EXPECT_GT(large.peak_bytes, configured.peak_bytes);
  EXPECT_LT(large.peak_bytes, kUnreplayableBytes);
  for (const std::int64_t micro :
       {std::int64_t{1} << 40, std::numeric_limits<std::int64_t>::max()}) {
    const StepMemory beyond = predict_step_memory(config, 1, DeviceKind::kCpu, micro);
    EXPECT_EQ(beyond.peak_bytes, kUnreplayableBytes) << micro;
    EXPECT_NE(beyond.peak_phase.find("not replayed"), std::string::npos) << beyond.peak_phase;
  }
}

}  // namespace
}  // namespace nss::preflight

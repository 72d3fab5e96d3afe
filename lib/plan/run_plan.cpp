#include "plan/run_plan.h"

#include <cstdlib>
#include <cstring>

#include "config/derived.h"

namespace nss::plan {

bool varlen_attention_built() {
  return NSS_HAVE_VARLEN_ATTENTION != 0;
}

bool fused_attention_built() {
  return NSS_HAVE_FUSED_ATTENTION != 0;
}

const Switches& environment_switches() {
  static const Switches switches = [] {
    const char* varlen = std::getenv("NSS_VARLEN_ATTENTION");
    Switches s;
    s.varlen_attention =
        varlen_attention_built() && varlen != nullptr && std::strcmp(varlen, "1") == 0;
    return s;
  }();
  return switches;
}

PackedAttention packed_attention(DeviceKind device, const Switches& switches) {
  if (device != DeviceKind::kCuda) return PackedAttention::kPerDocument;
  return switches.varlen_attention ? PackedAttention::kVarlen : PackedAttention::kMask;
}

DType RunPlan::element_type() const {
  return config::element_type(compute_dtype);
}

std::int64_t RunPlan::compute_bytes() const {
  return static_cast<std::int64_t>(dtype_size(element_type()));
}

int RunPlan::forward_prefetch(int unit, int units) const {
  return prefetch && unit + 1 < units ? unit + 1 : -1;
}

int RunPlan::backward_prefetch(int unit, bool embedding_trains) const {
  return prefetch && (unit > 1 || (unit == 1 && embedding_trains)) ? unit - 1 : -1;
}

RunPlan make_run_plan(const config::Config& config, DeviceKind device, int world_size,
                      const Switches& switches) {
  const bool gpu = device == DeviceKind::kCuda;
  RunPlan plan;
  plan.device = device;
  plan.world_size = world_size;
  plan.shard_ranks = config::shard_group_ranks(config.parallel, world_size);
  plan.tensor_ranks = static_cast<int>(config.parallel.tensor_parallel_size);
  plan.sequence_parallel = plan.tensor_ranks > 1 && config.parallel.sequence_parallel;
  plan.compute_dtype = config::resolved_dtype(config.training, device);
  plan.recompute = config.training.activation_checkpointing;
  plan.reshard_after_forward = config::reshard_after_forward(config);
  plan.prefetch = gpu;
  plan.offload_optimizer = gpu && config.parallel.offload_optimizer;
  plan.packed = config.data.packing != config::Packing::kWindows;
  plan.packed_attention = packed_attention(device, switches);
  plan.fused_attention = fused_attention_built();
  plan.loss_chunk_tokens = config.training.loss_chunk_tokens;
  plan.per_example = config.privacy.enabled;
  return plan;
}

}  // namespace nss::plan

// The memory model of fused attention (plan::RunPlan::fused_attention: the
// libtorch 2 builds' scaled_dot_product_attention, which keeps no scores)
// against steps measured on GPUs, recorded here because no GPU runs this
// suite: the preflight's synthetic step on an H200 on 2026-11-29 (tensor
// peaks of preflight.json's memory.measurements, one rank, the fused
// RMSNorm/RoPE/SwiGLU kernels on) and the Llama-3.2-1B steps on an H100 on
// 2026-11-27 with those kernels off (docs/performance.md, "GPU"), where the
// explicit path's count was +22% to +136% over.
#include <cmath>
#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "config/load.h"
#include "plan/run_plan.h"
#include "preflight/memory_model.h"

namespace nss::preflight {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

struct Measured {
  const char* dtype;
  int loss_chunk_tokens;
  const char* recompute;
  int micro_batch;
  double tensor_peak_bytes;
};

std::int64_t predicted(const std::string& text, std::int64_t micro_batch, bool fused) {
  const config::Config config = config::parse_config_text(text, "test");
  plan::RunPlan plan = plan::make_run_plan(config, DeviceKind::kCuda, 1);
  plan.fused_attention = fused;
  return predict_step_memory(config, plan, micro_batch).peak_bytes;
}

std::string tiny_text(const Measured& m) {
  return std::string(R"(
model: {preset: tiny, hidden_size: 256, intermediate_size: 512, head_dim: 64, vocab_size: 2048}
data: {seq_len: 256}
training: {global_batch_size: 4, micro_batch_size: 2, dtype: )") +
         m.dtype + ", loss_chunk_tokens: " + std::to_string(m.loss_chunk_tokens) +
         ", activation_checkpointing: " + m.recompute + "}\n";
}

// The synthetic step at the shape of synthetic_step_test's CUDA case, in
// fp32 and bf16, with the chunked and the unchunked head, without and with
// recompute: within 10% (the fused elementwise kernels keep a little less
// than the model counts).
TEST(FusedAttentionMemory, TheSyntheticStepOnAnH200) {
  const Measured steps[] = {
      {"bf16", 0, "full", 1, 49962496},   {"bf16", 0, "full", 2, 58877440},
      {"bf16", 0, "none", 1, 54432768},   {"bf16", 0, "none", 2, 66767872},
      {"bf16", 512, "full", 1, 48127488}, {"bf16", 512, "full", 2, 52061696},
      {"bf16", 512, "none", 1, 52597248}, {"bf16", 512, "none", 2, 59951616},
      {"fp32", 0, "full", 1, 51535872},   {"fp32", 0, "full", 2, 60975104},
      {"fp32", 0, "none", 1, 62822912},   {"fp32", 0, "none", 2, 79090176},
      {"fp32", 512, "full", 1, 48129536}, {"fp32", 512, "full", 2, 53638656},
      {"fp32", 512, "none", 1, 59152384}, {"fp32", 512, "none", 2, 69652480},
  };
  for (const Measured& m : steps) {
    const double fused = static_cast<double>(predicted(tiny_text(m), m.micro_batch, true));
    const double explicit_path = static_cast<double>(predicted(tiny_text(m), m.micro_batch, false));
    std::printf("%s chunk %d %s mb %d: explicit %+.1f%%, fused %+.1f%%\n", m.dtype,
                m.loss_chunk_tokens, m.recompute, m.micro_batch,
                100 * (explicit_path / m.tensor_peak_bytes - 1),
                100 * (fused / m.tensor_peak_bytes - 1));
    EXPECT_LT(std::abs(fused / m.tensor_peak_bytes - 1), 0.10)
        << m.dtype << " chunk " << m.loss_chunk_tokens << " " << m.recompute << " mb "
        << m.micro_batch;
  }
}

// Llama-3.2-1B, bf16, sequence 2048, micro-batch 4 × 2 on one rank: the
// allocator's peaks (less the CUDA context's 512 MiB where the report added
// it). Without and with full recompute on an H100 (2026-11-27, the fused
// elementwise kernels off); selective recompute (kernels on), LoRA and QLoRA
// (rank 16 on all seven projections, full recompute, kernels off) on an H200.
TEST(FusedAttentionMemory, Llama1BOnH100AndH200) {
  const char* all_seven =
      "targets: [q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj]";
  const struct {
    std::string training;
    double peak_gib;
  } rows[] = {
      {"activation_checkpointing: none", 37.86 - 0.5},
      {"activation_checkpointing: full", 22.30 - 0.5},
      {"activation_checkpointing: selective", 24.42 - 0.5},
      {std::string("lora: {enabled: true, rank: 16, ") + all_seven + "}", 4.40},
      {std::string("lora: {enabled: true, rank: 16, quantize_base: nf4, ") + all_seven + "}",
       3238681088.0 / kGiB},
  };
  for (const auto& row : rows) {
    const std::string text = R"(
model: {preset: llama-3.2-1b}
data: {seq_len: 2048}
training: {global_batch_size: 8, micro_batch_size: 4, dtype: bf16, )" +
                             row.training + "}\n";
    const double fused = static_cast<double>(predicted(text, 4, true)) / kGiB;
    const double explicit_path = static_cast<double>(predicted(text, 4, false)) / kGiB;
    std::printf("1B %s: measured %.2f GiB, explicit %.2f GiB (%+.1f%%), fused %.2f GiB (%+.1f%%)\n",
                row.training.c_str(), row.peak_gib, explicit_path,
                100 * (explicit_path / row.peak_gib - 1), fused, 100 * (fused / row.peak_gib - 1));
    EXPECT_LT(std::abs(fused / row.peak_gib - 1), 0.10) << row.training;
  }
}

// Attention with a mask (packed rows, a window shorter than the sequence)
// is counted as the explicit path whatever the build: its bias or mask may
// be kept and expanded, which the fused accounting leaves out.
TEST(FusedAttentionMemory, AttentionWithAMaskKeepsTheExplicitCount) {
  const std::string packed = R"(
model: {preset: tiny, hidden_size: 256, intermediate_size: 512, head_dim: 64, vocab_size: 2048}
data: {seq_len: 256, packing: documents}
training: {global_batch_size: 4, micro_batch_size: 2, activation_checkpointing: none}
)";
  EXPECT_EQ(predicted(packed, 2, true), predicted(packed, 2, false));
  const auto mistral = [](int window, const char* layer_types) {
    return std::string(R"(
model: {preset: tiny, family: mistral, hidden_size: 256, intermediate_size: 512, head_dim: 64,
        vocab_size: 2048, sliding_window: )") +
           std::to_string(window) + ", layer_types: " + layer_types + R"(}
data: {seq_len: 256}
training: {global_batch_size: 4, micro_batch_size: 2, activation_checkpointing: none}
)";
  };
  const std::string windowed = mistral(64, "[full_attention, sliding_attention]");
  EXPECT_EQ(predicted(windowed, 2, true), predicted(windowed, 2, false));
  // A window as long as the sequence attends causally, without a mask.
  const std::string whole = mistral(256, "[sliding_attention, sliding_attention]");
  EXPECT_LT(predicted(whole, 2, true), predicted(whole, 2, false));
}

}  // namespace
}  // namespace nss::preflight

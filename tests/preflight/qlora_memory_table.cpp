// Prints docs/performance.md's QLoRA tables from the preflight's analytic
// memory model (preflight::predict_step_memory, GPU device, bf16, seq 2048,
// micro-batch 1, adapters of rank 16 on all seven projections): per-rank
// tensor peak and model state of LoRA against QLoRA (NF4, double
// quantisation) for the Llama-3.2-1B and Llama-3.1-8B shapes at 1, 2 and 8
// ranks, and the largest of a ladder of Llama shapes whose single-GPU peak
// fits 90% (preflight.max_memory_fraction) of 24, 48 and 80 GB.
// usage: qlora_memory_table
#include <cstdio>
#include <string>
#include <vector>

#include "config/load.h"
#include "preflight/memory_model.h"

namespace {

struct Shape {
  const char* name;
  const char* model;  // YAML of the model section
};

const std::vector<Shape> kLadder = {
    {"Llama-3.2-1B", "{preset: llama-3.2-1b}"},
    {"Llama-3.2-3B", "{preset: llama-3.2-3b}"},
    {"Llama-3.1-8B", "{preset: llama-3.1-8b}"},
    {"Llama-2-13B",
     "{preset: tiny, hidden_size: 5120, intermediate_size: 13824, "
     "num_hidden_layers: 40, num_attention_heads: 40, num_key_value_heads: 40, "
     "head_dim: 128, vocab_size: 32000, max_position_embeddings: 4096}"},
    {"CodeLlama-34B",
     "{preset: tiny, hidden_size: 8192, intermediate_size: 22016, "
     "num_hidden_layers: 48, num_attention_heads: 64, num_key_value_heads: 8, "
     "head_dim: 128, vocab_size: 32000, max_position_embeddings: 16384}"},
    {"Llama-3.1-70B",
     "{preset: tiny, hidden_size: 8192, intermediate_size: 28672, "
     "num_hidden_layers: 80, num_attention_heads: 64, num_key_value_heads: 8, "
     "head_dim: 128, vocab_size: 128256, max_position_embeddings: 131072}"},
};

nss::config::Config job(const Shape& shape, bool nf4, int world) {
  const std::string yaml =
      std::string("model: ") + shape.model +
      "\ndata: {seq_len: 2048}\ntraining: {dtype: bf16, micro_batch_size: 1, "
      "global_batch_size: " +
      std::to_string(world) +
      ", lora: {enabled: true, rank: 16, alpha: 32, targets: [q_proj, k_proj, v_proj, o_proj, "
      "gate_proj, up_proj, down_proj]" +
      (nf4 ? ", quantize_base: nf4, double_quant: true" : "") + "}}\n";
  return nss::config::parse_config_text(yaml, shape.name);
}

double gib(std::uint64_t bytes) {
  return static_cast<double>(bytes) / (1u << 30);
}

}  // namespace

int main() {
  using nss::preflight::DeviceKind;
  std::printf(
      "| model | ranks | LoRA peak | QLoRA peak | LoRA state | QLoRA state | base B/param "
      "LoRA / QLoRA |\n|---|---|---|---|---|---|---|\n");
  for (const Shape& shape : {kLadder[0], kLadder[2]}) {
    for (const int world : {1, 2, 8}) {
      const auto lora = nss::preflight::predict_step_memory(job(shape, false, world), world,
                                                            DeviceKind::kCuda, 1);
      const auto qlora =
          nss::preflight::predict_step_memory(job(shape, true, world), world, DeviceKind::kCuda, 1);
      std::printf("| %s | %d | %.2f GiB | %.2f GiB | %.2f GiB | %.2f GiB | %.3g / %.3g |\n",
                  shape.name, world, gib(lora.peak_bytes), gib(qlora.peak_bytes),
                  gib(lora.state_bytes), gib(qlora.state_bytes), *lora.base_bytes_per_parameter,
                  *qlora.base_bytes_per_parameter);
    }
  }
  std::printf(
      "\n| GPU memory | largest with LoRA (peak) | largest with QLoRA (peak) |\n|---|---|---|\n");
  for (const double gb : {24.0, 48.0, 80.0}) {
    const double budget = 0.9 * gb * 1e9;
    std::string best[2] = {"none", "none"};
    for (const Shape& shape : kLadder) {
      for (const bool nf4 : {false, true}) {
        const auto step =
            nss::preflight::predict_step_memory(job(shape, nf4, 1), 1, DeviceKind::kCuda, 1);
        if (static_cast<double>(step.peak_bytes) <= budget) {
          char text[96];
          std::snprintf(text, sizeof text, "%s (%.1f GiB)", shape.name, gib(step.peak_bytes));
          best[nf4 ? 1 : 0] = text;
        }
      }
    }
    std::printf("| %.0f GB | %s | %s |\n", gb, best[0].c_str(), best[1].c_str());
  }
  return 0;
}

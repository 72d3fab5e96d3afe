// Deterministic training-like state for checkpoint tests: a tiny Llama's
// tensors (plus both AdamW moments) sharded FSDP-style — each unit's tensors
// flattened into one buffer, padded to a multiple of 4 x world size, rank r
// owning slice r — so pieces span tensor boundaries and padding exists at
// every world size. Padding holds NaN: a save that wrote it would be refused,
// and a load that touched it would be caught.
//
// Values are exact and easy to reproduce elsewhere (tests/checkpoint/synthetic.py):
//   code  = FNV-1a-32(tensor name) mod 4096
//   value = ((element * 2654435761 + step * 40503 + code * 97) mod 2^20) / 2^19 - 1
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "checkpoint/layout.h"

namespace nss::testing {

struct SyntheticShape {
  std::int64_t vocab = 37;
  std::int64_t hidden = 16;
  std::int64_t intermediate = 40;
  std::int64_t layers = 2;
  std::int64_t kv_dim = 8;
};

struct SyntheticModel {
  std::vector<checkpoint::TensorSpec> tensors;  // model tensors, then optimizer moments
  std::vector<std::vector<std::string>> units;  // model tensor names per FSDP unit
};

/// The tensors of a tiny Llama of `shape` and their moments; `tied` leaves out
/// lm_head.weight (tie_word_embeddings).
SyntheticModel synthetic_model(const SyntheticShape& shape = {}, bool with_optimizer = true,
                               bool tied = false);

/// LoRA adapters of rank `rank` on q_proj and v_proj of every layer
/// ("<module>.lora_A.weight" [rank, in], "<module>.lora_B.weight" [out, rank])
/// and their moments.
SyntheticModel synthetic_lora_model(const SyntheticShape& shape, std::int64_t rank);

/// One rank's buffers (model, exp_avg, exp_avg_sq per unit) and their storage.
struct RankState {
  std::vector<std::vector<float>> storage;
  std::vector<checkpoint::ShardBuffer> buffers;
};

/// Rank `rank` of `world`'s share, padding set to NaN and pieces to NaN too (unfilled).
RankState make_rank_state(const SyntheticModel& model, int rank, int world,
                          bool with_optimizer = true);

/// The value of element `element` of `tensor` at `step`.
float expected_value(const std::string& tensor, std::uint64_t element, std::int64_t step);

/// Fills every piece with its values at `step`.
void fill_rank_state(RankState& state, std::int64_t step);

/// Piece elements that differ (bitwise) from their values at `step`, plus
/// padding elements that are no longer NaN; `optimizer` false skips optimizer pieces.
std::uint64_t count_mismatches(const RankState& state, std::int64_t step, bool optimizer = true);

/// Every element of every piece set to `value` (e.g. to tell loaded from untouched).
void set_pieces(RankState& state, float value, bool optimizer = true);

}  // namespace nss::testing

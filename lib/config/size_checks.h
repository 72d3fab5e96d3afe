// Products of the configuration's numbers, bounded. Each key has a range
// (config.h), but their products — the tokens a run trains on, the model's
// parameters, the largest tensors of a micro-batch — could still leave 64
// bits in the stages that compute them (the data checks, the memory model,
// the trainer's counters). They are computed here with overflow checks
// before any rank does work, so a huge value is a usage error (exit 2) that
// names its keys, not a wrapped number later.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/checked_product.h"
#include "config/config.h"

namespace nss::config {

class Problems;

/// Elements no tensor of one rank may reach, and the bound on the model's
/// parameters: 2^44 (64 TiB in fp32), beyond any device or host. Below it
/// the memory model's sums of byte counts stay within 64 bits.
inline constexpr std::int64_t kMaxTensorElements = std::int64_t{1} << 44;

/// Tokens of one optimizer step over all ranks: 2^36, 4096x Llama 3's 16M.
/// It also bounds every micro-batch the preflight's budget search probes
/// (at most the global batch) and so the dataloader queue it prices.
inline constexpr std::int64_t kMaxStepTokens = std::int64_t{1} << 36;

/// One of the largest tensors a micro-batch creates, and its elements.
struct MicroBatchTensor {
  std::string what;  // "attention scores"
  NamedProduct elements;
  std::string hint;  // which keys to lower
};

/// The largest tensors of a micro-batch of `micro_batch_size` sequences:
/// hidden states, attention outputs, MLP activations, logits (tokens x their
/// row) and attention scores (x heads x seq_len).
std::vector<MicroBatchTensor> micro_batch_tensors(const Config& config,
                                                  std::int64_t micro_batch_size);

/// Whether every tensor of such a micro-batch stays within kMaxTensorElements.
bool micro_batch_fits(const Config& config, std::int64_t micro_batch_size);

/// Adds a problem for every product of `config` beyond its bound: parameters,
/// tokens per step, of the run and of a validation, the micro-batch's tensors.
void check_sizes(const Config& config, Problems& problems);

}  // namespace nss::config

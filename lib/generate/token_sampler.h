// Choosing the next token from a position's logits: greedy, or temperature,
// top-k and top-p (nucleus) sampling in the order and with the tie rules of
// Hugging Face transformers' logits warpers. Every draw takes its uniform
// number from a counter-based generator keyed by (seed, prompt, sample,
// position), so what a sequence generates does not depend on the batch it
// shares, the number of ranks or threads, or the order of the calls.
#pragma once

#include <cstdint>
#include <vector>

namespace nss::generate {

struct SamplingSettings {
  double temperature = 0.9;  // 0: greedy
  std::int64_t top_k = 0;    // 0: no limit
  double top_p = 1.0;        // 1: no limit
  std::uint64_t seed = 0;
};

/// The token a draw is for: prompt `prompt_index`'s sample `sample`, at
/// generated position `position` (0 for the first new token).
struct DrawPosition {
  std::int64_t prompt_index = 0;
  std::int64_t sample = 0;
  std::int64_t position = 0;
};

/// A token a draw may choose, with its probability.
struct Candidate {
  std::int32_t token = 0;
  double probability = 0;
};

class TokenSampler {
 public:
  /// Throws UsageError for a negative temperature or top_k, or top_p outside (0, 1].
  explicit TokenSampler(const SamplingSettings& settings);

  /// The next token from `vocab` logits. Greedy (temperature 0) takes the
  /// largest logit, the lowest id among equals; NaN logits never win.
  std::int32_t pick(const float* logits, std::int64_t vocab, const DrawPosition& at) const;

  /// What a sampling draw chooses from (temperature > 0): the tokens top-k
  /// and top-p keep, most likely first (the highest id first among equals),
  /// with probabilities that sum to 1.
  std::vector<Candidate> candidates(const float* logits, std::int64_t vocab) const;

  /// The uniform number in (0, 1) a draw at `at` uses.
  double uniform(const DrawPosition& at) const;

 private:
  SamplingSettings settings_;
};

}  // namespace nss::generate

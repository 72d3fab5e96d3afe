// What a sequence may take next, beside what the model prefers: a
// constraint keeps a state per sequence, refuses tokens by setting their
// logits to -infinity before temperature, top-k and top-p, and moves on with
// each token taken (--constrain schema: record_constraint.h). The decoding
// loop knows nothing else of it.
#pragma once

#include <cstdint>

namespace nss::generate {

class TokenConstraint {
 public:
  virtual ~TokenConstraint() = default;

  /// The state of a sequence before its first token.
  virtual std::int64_t start() const = 0;
  /// Sets the logits of the tokens not allowed in `state` to -infinity.
  virtual void mask(std::int64_t state, float* logits, std::int64_t vocab) = 0;
  /// The state after token `id`; kRefused when `id` was not allowed.
  virtual std::int64_t advance(std::int64_t state, std::int64_t id) const = 0;

  static constexpr std::int64_t kRefused = -1;
};

}  // namespace nss::generate

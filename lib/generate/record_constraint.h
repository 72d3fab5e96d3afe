// --constrain schema: the record automaton (record_automaton.h) and its
// token masks (token_masks.h) as a TokenConstraint, so that a sampled
// completion can only be records of the schema; the time spent on masks is
// kept for generation.json.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "generate/record_automaton.h"
#include "generate/token_constraint.h"
#include "generate/token_masks.h"

namespace nss::generate {

/// What each token adds to a completion's text (TextCodec::token_bytes),
/// as the completion's first token and after another.
struct VocabularyBytes {
  std::vector<std::optional<std::string>> first, after;
};

class RecordConstraint final : public TokenConstraint {
 public:
  /// `categories`: columns with recorded categories take one of them.
  RecordConstraint(const RecordSchema& schema, bool grouped, bool categories,
                   VocabularyBytes vocabulary, std::vector<std::int32_t> end_ids);

  std::int64_t start() const override { return pack(automaton_.start()); }
  void mask(std::int64_t state, float* logits, std::int64_t vocab) override;
  std::int64_t advance(std::int64_t state, std::int64_t id) const override;

  double mask_seconds() const { return mask_seconds_; }
  /// The fewest tokens a complete record takes with this vocabulary (its
  /// shortest text over the longest token), the end token included.
  std::int64_t minimum_tokens() const;
  std::size_t cached_masks() const { return masks_.cached_masks(); }

 private:
  static std::int64_t pack(const RecordAutomaton::State& state) {
    return (static_cast<std::int64_t>(state.node) << 32) | static_cast<std::uint32_t>(state.count);
  }
  static RecordAutomaton::State unpack(std::int64_t packed) {
    return {static_cast<std::int32_t>(packed >> 32),
            static_cast<std::int32_t>(packed & 0xFFFFFFFF)};
  }

  RecordAutomaton automaton_;
  TokenMasks masks_;
  double mask_seconds_ = 0;
};

}  // namespace nss::generate

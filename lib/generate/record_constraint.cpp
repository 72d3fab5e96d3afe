#include "generate/record_constraint.h"

#include <algorithm>
#include <chrono>

namespace nss::generate {

RecordConstraint::RecordConstraint(const RecordSchema& schema, bool grouped, bool categories,
                                   VocabularyBytes vocabulary, std::vector<std::int32_t> end_ids)
    : automaton_(schema, grouped, categories),
      masks_(automaton_, std::move(vocabulary.after), std::move(end_ids),
             std::move(vocabulary.first)) {}

void RecordConstraint::mask(std::int64_t state, float* logits, std::int64_t vocab) {
  const auto start = std::chrono::steady_clock::now();
  masks_.apply(masks_.allowed(unpack(state)), logits, vocab);
  mask_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::int64_t RecordConstraint::minimum_tokens() const {
  const std::size_t bytes = automaton_.shortest_completion();
  const std::size_t longest = std::max<std::size_t>(masks_.longest_token(), 1);
  return static_cast<std::int64_t>((bytes + longest - 1) / longest) + 1;
}

std::int64_t RecordConstraint::advance(std::int64_t state, std::int64_t id) const {
  RecordAutomaton::State next = unpack(state);
  if (masks_.is_end(static_cast<std::int32_t>(id)))
    return automaton_.accepting(next) ? state : kRefused;
  return masks_.advance(next, static_cast<std::int32_t>(id)) ? pack(next) : kRefused;
}

}  // namespace nss::generate

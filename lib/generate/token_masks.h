// Which tokens may come next in a records completion: a token is allowed
// at an automaton state when all its bytes walk on from there
// (record_automaton.h), an end token only where a completion may end. The
// vocabulary is a byte trie walked once per distinct state and pruned at
// the first refused byte, as outlines and xgrammar index a grammar; masks
// are cached by (node, counter capped at the longest token), since beyond
// that length a counter cannot change which tokens fit.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "generate/record_automaton.h"

namespace nss::generate {

class TokenMasks {
 public:
  /// The allowed ids, or the refused ones when fewer: sorted.
  struct Mask {
    bool lists_allowed = true;
    std::vector<std::int32_t> ids;
    bool allows(std::int32_t id) const;
  };

  /// `token_bytes[id]`: what token id adds to the completion's text after
  /// other tokens; nullopt for a token never to be sampled inside one
  /// (special tokens). `end_ids`: the tokens that end a completion.
  /// `first_bytes` (same length, or empty when alike): what each adds as the
  /// completion's first token, where a decoder treats that one apart.
  TokenMasks(const RecordAutomaton& automaton, std::vector<std::optional<std::string>> token_bytes,
             std::vector<std::int32_t> end_ids,
             std::vector<std::optional<std::string>> first_bytes = {});

  /// The tokens allowed at `state` (computed at the first visit, then cached).
  const Mask& allowed(const RecordAutomaton::State& state);

  /// Sets the logits of the tokens `mask` refuses to -infinity (`vocab` of
  /// them; ids past the tokenizer's, rows a model pads its embedding with,
  /// are refused too).
  void apply(const Mask& mask, float* logits, std::int64_t vocab) const;

  /// `state` after token `id` (an allowed one); false for an end token or
  /// one the automaton refuses.
  bool advance(RecordAutomaton::State& state, std::int32_t id) const;

  bool is_end(std::int32_t id) const;
  std::size_t cached_masks() const { return cache_.size(); }
  std::size_t longest_token() const { return longest_; }

 private:
  struct TrieNode {
    std::vector<std::pair<unsigned char, std::int32_t>> children;  // by byte
    std::vector<std::int32_t> ids;                                 // tokens ending here
  };

  void collect(std::int32_t trie_node, RecordAutomaton::State state,
               std::vector<std::int32_t>& allowed) const;
  Mask compute(const RecordAutomaton::State& state) const;
  Mask as_mask(std::vector<std::int32_t> allowed) const;
  const std::vector<std::optional<std::string>>& bytes_at(
      const RecordAutomaton::State& state) const;

  const RecordAutomaton& automaton_;
  std::vector<std::optional<std::string>> token_bytes_, first_bytes_;
  std::vector<std::int32_t> end_ids_;  // sorted
  std::vector<TrieNode> trie_;
  std::size_t longest_ = 0;
  std::map<std::pair<std::int32_t, std::int32_t>, Mask> cache_;
};

}  // namespace nss::generate

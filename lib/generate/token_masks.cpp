#include "generate/token_masks.h"

#include <algorithm>
#include <limits>

#include "core/error.h"

namespace nss::generate {

bool TokenMasks::Mask::allows(std::int32_t id) const {
  return std::binary_search(ids.begin(), ids.end(), id) == lists_allowed;
}

TokenMasks::TokenMasks(const RecordAutomaton& automaton,
                       std::vector<std::optional<std::string>> token_bytes,
                       std::vector<std::int32_t> end_ids,
                       std::vector<std::optional<std::string>> first_bytes)
    : automaton_(automaton),
      token_bytes_(std::move(token_bytes)),
      first_bytes_(std::move(first_bytes)),
      end_ids_(std::move(end_ids)) {
  if (!first_bytes_.empty() && first_bytes_.size() != token_bytes_.size())
    throw InternalError("generate", "first-token bytes for " + std::to_string(first_bytes_.size()) +
                                        " of " + std::to_string(token_bytes_.size()) + " tokens");
  std::sort(end_ids_.begin(), end_ids_.end());
  trie_.emplace_back();
  for (std::size_t id = 0; id < token_bytes_.size(); ++id) {
    const auto& bytes = token_bytes_[id];
    if (!bytes || bytes->empty() || is_end(static_cast<std::int32_t>(id))) continue;
    longest_ = std::max(longest_, bytes->size());
    std::int32_t node = 0;
    for (const char c : *bytes) {
      const auto byte = static_cast<unsigned char>(c);
      auto& children = trie_[node].children;
      const auto it = std::find_if(children.begin(), children.end(),
                                   [&](const auto& child) { return child.first == byte; });
      if (it != children.end()) {
        node = it->second;
        continue;
      }
      const auto next = static_cast<std::int32_t>(trie_.size());
      children.emplace_back(byte, next);
      trie_.emplace_back();  // invalidates `children`
      node = next;
    }
    trie_[node].ids.push_back(static_cast<std::int32_t>(id));
  }
}

bool TokenMasks::is_end(std::int32_t id) const {
  return std::binary_search(end_ids_.begin(), end_ids_.end(), id);
}

void TokenMasks::collect(std::int32_t trie_node, RecordAutomaton::State state,
                         std::vector<std::int32_t>& allowed) const {
  const TrieNode& node = trie_[trie_node];
  allowed.insert(allowed.end(), node.ids.begin(), node.ids.end());
  for (const auto& [byte, child] : node.children) {
    RecordAutomaton::State next = state;
    if (automaton_.step(next, byte)) collect(child, next, allowed);
  }
}

const std::vector<std::optional<std::string>>& TokenMasks::bytes_at(
    const RecordAutomaton::State& state) const {
  return state.node == automaton_.start().node && !first_bytes_.empty() ? first_bytes_
                                                                        : token_bytes_;
}

TokenMasks::Mask TokenMasks::compute(const RecordAutomaton::State& state) const {
  std::vector<std::int32_t> allowed;
  if (&bytes_at(state) == &first_bytes_) {
    // The completion's first token: once per run, so a plain walk of each.
    for (std::size_t id = 0; id < first_bytes_.size(); ++id) {
      RecordAutomaton::State next = state;
      if (advance(next, static_cast<std::int32_t>(id)))
        allowed.push_back(static_cast<std::int32_t>(id));
    }
  } else {
    collect(0, state, allowed);
  }
  if (automaton_.accepting(state)) allowed.insert(allowed.end(), end_ids_.begin(), end_ids_.end());
  std::sort(allowed.begin(), allowed.end());
  return as_mask(std::move(allowed));
}

TokenMasks::Mask TokenMasks::as_mask(std::vector<std::int32_t> allowed) const {
  Mask mask;
  const auto vocab = static_cast<std::int32_t>(token_bytes_.size());
  if (allowed.size() * 2 <= token_bytes_.size()) {
    mask.ids = std::move(allowed);
    return mask;
  }
  mask.lists_allowed = false;
  auto it = allowed.begin();
  for (std::int32_t id = 0; id < vocab; ++id) {
    if (it != allowed.end() && *it == id)
      ++it;
    else
      mask.ids.push_back(id);
  }
  return mask;
}

const TokenMasks::Mask& TokenMasks::allowed(const RecordAutomaton::State& state) {
  const auto cap = static_cast<std::int32_t>(std::min<std::size_t>(
      longest_, static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())));
  const std::pair<std::int32_t, std::int32_t> key{state.node, std::min(state.count, cap)};
  const auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  return cache_.emplace(key, compute(state)).first->second;
}

void TokenMasks::apply(const Mask& mask, float* logits, std::int64_t vocab) const {
  constexpr float kRefused = -std::numeric_limits<float>::infinity();
  if (!mask.lists_allowed) {
    for (const std::int32_t id : mask.ids)
      if (id < vocab) logits[id] = kRefused;
    for (auto id = static_cast<std::int64_t>(token_bytes_.size()); id < vocab; ++id)
      logits[id] = kRefused;
    return;
  }
  auto it = mask.ids.begin();
  for (std::int64_t id = 0; id < vocab; ++id) {
    if (it != mask.ids.end() && *it == id)
      ++it;
    else
      logits[id] = kRefused;
  }
}

bool TokenMasks::advance(RecordAutomaton::State& state, std::int32_t id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= token_bytes_.size() || is_end(id)) return false;
  const auto& bytes = bytes_at(state)[id];
  return bytes && !bytes->empty() && automaton_.walk(state, *bytes);
}

}  // namespace nss::generate

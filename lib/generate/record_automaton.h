// The byte language of a records completion as training rendered it, as a
// deterministic automaton: compact JSON objects with exactly the schema's
// keys in its order (csv_row_to_json's rendering), a JSON number in a
// number column, a string or a number in another (a string of ASCII digits
// or a missing-value spelling of the column where every text cell was one
// of those), "" only where the table had empty cells,
// strings as append_json_string escapes them (valid UTF-8, only the escapes
// it writes), one record per line when examples were grouped. Each string's characters and each
// part of a number's digits is bounded, so every path through the automaton is finite.
//
// A state is a node and a counter (what is left of the bound being
// counted): nodes are few (a chain per key, a handful per value), so the
// automaton stays small however long the bounds are, and two states whose
// counters both exceed the longest token behave alike for any token — the
// key masks are cached by (token_masks.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "generate/record_validator.h"

namespace nss::generate {

class RecordAutomaton {
 public:
  struct State {
    std::int32_t node = 0;
    std::int32_t count = 0;
    bool operator==(const State& other) const { return node == other.node && count == other.count; }
  };

  /// The automaton of `schema`, each value within its column's limits (a
  /// limit of 0: no value of that kind, as none was in the table).
  /// `grouped`: records separated by "\n". `categories`: a column with
  /// recorded categories takes one of them (or "" where it had empty cells).
  RecordAutomaton(const RecordSchema& schema, bool grouped, bool categories = false);

  State start() const { return {0, 0}; }
  /// `state` after `byte`, or false when the byte is not allowed there.
  bool step(State& state, unsigned char byte) const;
  /// `state` after every byte of `bytes`, or false at the first not allowed.
  bool walk(State& state, const std::string& bytes) const;
  /// True where a completion may end (after a record's closing brace).
  bool accepting(const State& state) const { return nodes_[state.node].accepting; }
  std::size_t node_count() const { return nodes_.size(); }
  /// The length in bytes of the shortest complete completion.
  std::size_t shortest_completion() const;

 private:
  enum class Count : std::uint8_t { kKeep, kSet, kTake };
  struct Edge {
    unsigned char low, high;
    std::int32_t target;
    Count count;
    std::int32_t value;  // kSet: the new counter
  };
  struct Node {
    std::vector<Edge> edges;
    bool accepting = false;
  };

  std::int32_t add_node();
  void add_edge(std::int32_t from, unsigned char low, unsigned char high, std::int32_t to,
                Count count = Count::kKeep, std::int32_t value = 0);
  // Appends `text` after `from`; returns the node after its last byte.
  std::int32_t add_literal(std::int32_t from, const std::string& text);
  // `text` after each of `exits` (they share the chain after its first byte).
  std::int32_t join(const std::vector<std::int32_t>& exits, const std::string& text);
  std::vector<std::int32_t> add_value(std::int32_t from, const RecordSchema::Column& column);
  // One of the column's categories (or "" where allowed), as JSON strings.
  std::int32_t add_categories(std::int32_t from, const RecordSchema::Column& column);
  std::vector<std::int32_t> add_number(std::int32_t from, const ValueLimits& limits);
  // String content after the opening quote; returns the node after the closing one.
  std::int32_t add_string(std::int32_t first, bool empty_allowed, std::int32_t chars);
  // A digit-string column's string after the opening quote: ASCII digits,
  // or one of its missing-value spellings.
  std::int32_t add_digit_string(std::int32_t first, const RecordSchema::Column& column);
  // `literals` from `from`, sharing their prefixes' nodes, each ending at `end`.
  void add_trie(std::int32_t from, const std::vector<std::string>& literals, std::int32_t end);

  std::vector<Node> nodes_;
};

}  // namespace nss::generate

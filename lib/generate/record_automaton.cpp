#include "generate/record_automaton.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>

#include "core/error.h"
#include "data/csv_records.h"

namespace nss::generate {

std::int32_t RecordAutomaton::add_node() {
  nodes_.emplace_back();
  return static_cast<std::int32_t>(nodes_.size() - 1);
}

void RecordAutomaton::add_edge(std::int32_t from, unsigned char low, unsigned char high,
                               std::int32_t to, Count count, std::int32_t value) {
  nodes_[from].edges.push_back({low, high, to, count, value});
}

std::int32_t RecordAutomaton::add_literal(std::int32_t from, const std::string& text) {
  for (const char c : text) {
    const std::int32_t next = add_node();
    add_edge(from, static_cast<unsigned char>(c), static_cast<unsigned char>(c), next);
    from = next;
  }
  return from;
}

std::int32_t RecordAutomaton::join(const std::vector<std::int32_t>& exits,
                                   const std::string& text) {
  const std::int32_t first = add_node();
  const auto byte = static_cast<unsigned char>(text.front());
  // The counter of the value just ended means nothing here: reset, so states
  // that differ only in it are one state.
  for (const std::int32_t exit : exits) add_edge(exit, byte, byte, first, Count::kSet, 0);
  return add_literal(first, text.substr(1));
}

std::int32_t RecordAutomaton::add_string(std::int32_t first, bool empty_allowed,
                                         std::int32_t chars) {
  const std::int32_t content = add_node(), end = add_node();
  // Nodes inside a character: how many continuation bytes remain, and the
  // narrower first continuation after E0, ED, F0 and F4 (no overlong form,
  // surrogate or code point past U+10FFFF).
  const std::int32_t one = add_node(), two = add_node(), three = add_node();
  const std::int32_t after_e0 = add_node(), after_ed = add_node(), after_f0 = add_node(),
                     after_f4 = add_node();
  add_edge(one, 0x80, 0xBF, content);
  add_edge(two, 0x80, 0xBF, one);
  add_edge(three, 0x80, 0xBF, two);
  add_edge(after_e0, 0xA0, 0xBF, one);
  add_edge(after_ed, 0x80, 0x9F, one);
  add_edge(after_f0, 0x90, 0xBF, two);
  add_edge(after_f4, 0x80, 0x8F, two);
  // The escapes append_json_string writes: \" \\ \b \f \n \r \t and \u00XX.
  const std::int32_t escape = add_node(), u1 = add_node(), u2 = add_node(), u3 = add_node(),
                     u4 = add_node();
  for (const char c : std::string("\"\\bfnrt"))
    add_edge(escape, static_cast<unsigned char>(c), static_cast<unsigned char>(c), content);
  add_edge(escape, 'u', 'u', u1);
  add_edge(u1, '0', '0', u2);
  add_edge(u2, '0', '0', u3);
  add_edge(u3, '0', '1', u4);
  add_edge(u4, '0', '9', content);
  add_edge(u4, 'a', 'f', content);
  for (const std::int32_t at : {first, content}) {
    if (at == content || empty_allowed) add_edge(at, '"', '"', end);
    if (chars == 0) continue;
    add_edge(at, 0x20, 0x21, content, Count::kTake);
    add_edge(at, 0x23, 0x5B, content, Count::kTake);
    add_edge(at, '\\', '\\', escape, Count::kTake);
    add_edge(at, 0x5D, 0x7F, content, Count::kTake);
    add_edge(at, 0xC2, 0xDF, one, Count::kTake);
    add_edge(at, 0xE0, 0xE0, after_e0, Count::kTake);
    add_edge(at, 0xE1, 0xEC, two, Count::kTake);
    add_edge(at, 0xED, 0xED, after_ed, Count::kTake);
    add_edge(at, 0xEE, 0xEF, two, Count::kTake);
    add_edge(at, 0xF0, 0xF0, after_f0, Count::kTake);
    add_edge(at, 0xF1, 0xF3, three, Count::kTake);
    add_edge(at, 0xF4, 0xF4, after_f4, Count::kTake);
  }
  return end;
}

std::vector<std::int32_t> RecordAutomaton::add_number(std::int32_t from,
                                                      const ValueLimits& limits) {
  const std::int32_t sign = add_node(), zero = add_node(), integer = add_node();
  add_edge(from, '-', '-', sign);
  for (const std::int32_t at : {from, sign}) {
    add_edge(at, '0', '0', zero);
    add_edge(at, '1', '9', integer, Count::kSet, std::min(limits.integer_digits, 200) - 1);
  }
  add_edge(integer, '0', '9', integer, Count::kTake);
  std::vector<std::int32_t> exits{zero, integer};
  if (limits.fraction_digits > 0) {
    const std::int32_t point = add_node(), fraction = add_node();
    for (const std::int32_t at : {zero, integer})
      add_edge(at, '.', '.', point, Count::kSet, limits.fraction_digits);
    add_edge(point, '0', '9', fraction, Count::kTake);
    add_edge(fraction, '0', '9', fraction, Count::kTake);
    exits.push_back(fraction);
  }
  if (limits.exponent_digits > 0) {
    // Two exponent digits at most: with up to 200 integer digits the value
    // stays below a double's 1.8e308 (the validator refuses an overflow).
    const std::int32_t digits = std::min(limits.exponent_digits, 2);
    const std::int32_t e = add_node(), e_sign = add_node(), exponent = add_node();
    for (const std::int32_t at : std::vector<std::int32_t>(exits)) {
      add_edge(at, 'E', 'E', e, Count::kSet, digits);
      add_edge(at, 'e', 'e', e, Count::kSet, digits);
    }
    add_edge(e, '+', '+', e_sign);
    add_edge(e, '-', '-', e_sign);
    for (const std::int32_t at : {e, e_sign, exponent})
      add_edge(at, '0', '9', exponent, Count::kTake);
    exits.push_back(exponent);
  }
  return exits;
}

std::vector<std::int32_t> RecordAutomaton::add_value(std::int32_t from,
                                                     const RecordSchema::Column& column) {
  std::vector<std::int32_t> exits;
  const ValueLimits& limits = column.limits;
  // A number column's only string is the empty one.
  const std::int32_t chars = column.number ? 0 : limits.string_chars;
  if (chars > 0 || column.empty_cells) {
    const std::int32_t first = add_node();
    add_edge(from, '"', '"', first, Count::kSet, chars);
    exits.push_back(column.digit_strings ? add_digit_string(first, column)
                                         : add_string(first, column.empty_cells, chars));
  }
  // A string column keeps the cells that were number literals as numbers.
  if (limits.integer_digits > 0) {
    const std::vector<std::int32_t> number = add_number(from, limits);
    exits.insert(exits.end(), number.begin(), number.end());
  }
  if (exits.empty()) throw InternalError("generate", "column " + column.name + " allows no value");
  return exits;
}

void RecordAutomaton::add_trie(std::int32_t from, const std::vector<std::string>& literals,
                               std::int32_t end) {
  std::map<std::string, std::int32_t> prefixes{{"", from}};
  for (const std::string& literal : literals)
    for (std::size_t n = 1; n <= literal.size(); ++n) {
      const std::string prefix = literal.substr(0, n);
      if (prefixes.count(prefix)) continue;
      const auto byte = static_cast<unsigned char>(literal[n - 1]);
      const std::int32_t next = n == literal.size() ? end : add_node();
      if (n < literal.size()) prefixes[prefix] = next;
      add_edge(prefixes.at(literal.substr(0, n - 1)), byte, byte, next);
    }
}

std::int32_t RecordAutomaton::add_categories(std::int32_t from,
                                             const RecordSchema::Column& column) {
  const std::int32_t end = add_node();
  std::vector<std::string> literals;
  for (const std::string& value : column.categories) {
    literals.emplace_back();
    data::append_json_string(value, literals.back());
  }
  if (column.empty_cells) literals.push_back("\"\"");
  add_trie(from, literals, end);
  return end;
}

std::int32_t RecordAutomaton::add_digit_string(std::int32_t first,
                                               const RecordSchema::Column& column) {
  const std::int32_t content = add_node(), end = add_node();
  if (column.empty_cells) add_edge(first, '"', '"', end);
  add_edge(first, '0', '9', content, Count::kTake);
  add_edge(content, '0', '9', content, Count::kTake);
  add_edge(content, '"', '"', end);
  // The missing-value spellings after the opening quote; those beginning
  // with a digit ("1.#IND") would share the digits' edges and are not offered.
  std::vector<std::string> literals;
  for (const std::string& value : column.missing_values) {
    if (value.empty() || (value[0] >= '0' && value[0] <= '9')) continue;
    std::string quoted;
    data::append_json_string(value, quoted);
    literals.push_back(quoted.substr(1));
  }
  add_trie(first, literals, end);
  return end;
}

RecordAutomaton::RecordAutomaton(const RecordSchema& schema, bool grouped, bool categories) {
  const std::int32_t start = add_node();
  const std::int32_t opened = add_literal(start, "{");
  std::vector<std::int32_t> exits;
  for (std::size_t c = 0; c < schema.columns.size(); ++c) {
    std::string key;
    data::append_json_string(schema.columns[c].name, key);
    key += ':';
    const std::int32_t at = c == 0 ? add_literal(opened, key) : join(exits, "," + key);
    const auto& column = schema.columns[c];
    exits = categories && !column.categories.empty()
                ? std::vector<std::int32_t>{add_categories(at, column)}
                : add_value(at, column);
  }
  const std::int32_t closed = join(exits, "}");
  nodes_[closed].accepting = true;
  if (grouped) {
    const std::int32_t line = add_node();
    add_edge(closed, '\n', '\n', line);
    add_edge(line, '{', '{', opened);
  }
}

bool RecordAutomaton::step(State& state, unsigned char byte) const {
  for (const Edge& edge : nodes_[state.node].edges) {
    if (byte < edge.low || byte > edge.high) continue;
    switch (edge.count) {
      case Count::kKeep:
        break;
      case Count::kSet:
        state.count = edge.value;
        break;
      case Count::kTake:
        if (state.count <= 0) return false;
        --state.count;
        break;
    }
    state.node = edge.target;
    return true;
  }
  return false;
}

std::size_t RecordAutomaton::shortest_completion() const {
  // Breadth first over states; every byte of an edge's range leads alike.
  std::deque<std::pair<State, std::size_t>> queue{{start(), 0}};
  std::set<std::pair<std::int32_t, std::int32_t>> seen{{0, 0}};
  while (!queue.empty()) {
    const auto [state, length] = queue.front();
    queue.pop_front();
    if (accepting(state)) return length;
    for (const Edge& edge : nodes_[state.node].edges) {
      State next = state;
      if (step(next, edge.low) && seen.insert({next.node, next.count}).second)
        queue.emplace_back(next, length + 1);
    }
  }
  throw InternalError("generate", "the records automaton accepts nothing");
}

bool RecordAutomaton::walk(State& state, const std::string& bytes) const {
  for (const char c : bytes)
    if (!step(state, static_cast<unsigned char>(c))) return false;
  return true;
}

}  // namespace nss::generate

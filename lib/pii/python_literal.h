// Reads a class attribute's value out of Python source without running
// Python: the word lists of Faker's providers (python3-fake-factory) are
// tuples of strings and OrderedDicts of (word, weight) pairs written as
// literals, e.g.
//     last_names = OrderedDict((('Smith', 0.0217), ('Johnson', 0.0170), ...))
//     states_abbr = ('AL', 'AK', ...)
// Only that subset of Python's literal syntax is read: strings (single or
// double quotes, backslash escapes of quotes and backslashes), numbers,
// tuples and lists, OrderedDict(...) around one of them, comments.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nss::pii {

struct WeightedWord {
  std::string word;
  double weight = 1;
};

/// The words of `name = <literal>` (the first assignment at the start of a
/// line, indented or not): a tuple or list of strings (weight 1 each), or an
/// OrderedDict or tuple of (string, number) pairs. nullopt when there is no
/// such assignment; DataError naming `origin` and the line when its value
/// is not such a literal.
std::optional<std::vector<WeightedWord>> read_word_literal(std::string_view source,
                                                           std::string_view name,
                                                           const std::string& origin);

}  // namespace nss::pii

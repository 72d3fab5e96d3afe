#include "pii/python_literal.h"

#include <cctype>
#include <cstdlib>

#include "core/error.h"

namespace nss::pii {
namespace {

// A recursive-descent reader over the literal's text; errors carry the line.
class LiteralReader {
 public:
  LiteralReader(std::string_view source, std::size_t at, const std::string& origin)
      : source_(source), at_(at), origin_(origin) {}

  std::vector<WeightedWord> words() {
    skip_space();
    if (source_.compare(at_, 12, "OrderedDict(") == 0) {
      at_ += 12;
      std::vector<WeightedWord> out = sequence();
      expect(')');
      return out;
    }
    return sequence();
  }

 private:
  // A tuple or list whose items are strings or (string, number) pairs.
  std::vector<WeightedWord> sequence() {
    const char close = open_bracket();
    std::vector<WeightedWord> out;
    for (skip_space(); peek() != close; skip_space()) {
      if (peek() == '(') {
        at_ += 1;
        WeightedWord pair{string(), 0};
        expect(',');
        pair.weight = number();
        skip_space();
        if (peek() == ',') at_ += 1;
        expect(')');
        out.push_back(std::move(pair));
      } else {
        out.push_back({string(), 1});
      }
      skip_space();
      if (peek() == ',')
        at_ += 1;
      else if (peek() != close)
        fail("expected ',' or '" + std::string(1, close) + "'");
    }
    at_ += 1;
    return out;
  }

  char open_bracket() {
    skip_space();
    if (peek() == '(') return at_ += 1, ')';
    if (peek() == '[') return at_ += 1, ']';
    fail("expected a tuple or a list");
  }

  std::string string() {
    skip_space();
    const char quote = peek();
    if (quote != '\'' && quote != '"') fail("expected a string");
    std::string out;
    for (at_ += 1; peek() != quote; at_ += 1) {
      if (peek() == '\n' || at_ >= source_.size()) fail("a string is not closed");
      if (peek() == '\\') at_ += 1;  // \' \" \\ : the next character itself
      out.push_back(peek());
    }
    at_ += 1;
    return out;
  }

  double number() {
    skip_space();
    const std::string text(source_.substr(at_, 32));
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (end == text.c_str()) fail("expected a number");
    at_ += static_cast<std::size_t>(end - text.c_str());
    return value;
  }

  void expect(char c) {
    skip_space();
    if (peek() != c) fail("expected '" + std::string(1, c) + "'");
    at_ += 1;
  }

  void skip_space() {
    while (at_ < source_.size()) {
      if (std::isspace(static_cast<unsigned char>(source_[at_]))) {
        at_ += 1;
      } else if (source_[at_] == '#') {
        while (at_ < source_.size() && source_[at_] != '\n') at_ += 1;
      } else {
        break;
      }
    }
  }

  char peek() const { return at_ < source_.size() ? source_[at_] : '\0'; }

  [[noreturn]] void fail(const std::string& what) const {
    std::size_t line = 1;
    for (std::size_t i = 0; i < at_ && i < source_.size(); ++i) line += source_[i] == '\n';
    throw DataError("pii", origin_ + ":" + std::to_string(line) + ": " + what,
                    "the word lists are read from python3-fake-factory's files as Debian ships "
                    "them; reinstall the package (apt-get install --reinstall "
                    "python3-fake-factory)");
  }

  std::string_view source_;
  std::size_t at_;
  const std::string& origin_;
};

// The offset just past "name =" at the start of a line, or npos.
std::size_t assignment(std::string_view source, std::string_view name) {
  for (std::size_t line = 0; line < source.size();) {
    std::size_t at = line;
    while (at < source.size() && (source[at] == ' ' || source[at] == '\t')) ++at;
    if (source.compare(at, name.size(), name) == 0) {
      std::size_t after = at + name.size();
      while (after < source.size() && source[after] == ' ') ++after;
      if (after < source.size() && source[after] == '=' &&
          (after + 1 >= source.size() || source[after + 1] != '='))
        return after + 1;
    }
    const std::size_t next = source.find('\n', line);
    if (next == std::string_view::npos) break;
    line = next + 1;
  }
  return std::string_view::npos;
}

}  // namespace

std::optional<std::vector<WeightedWord>> read_word_literal(std::string_view source,
                                                           std::string_view name,
                                                           const std::string& origin) {
  const std::size_t at = assignment(source, name);
  if (at == std::string_view::npos) return std::nullopt;
  return LiteralReader(source, at, origin).words();
}

}  // namespace nss::pii

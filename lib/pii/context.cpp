#include "pii/context.h"

#include <algorithm>
#include <cctype>

#include "pii/ascii_text.h"

namespace nss::pii {
namespace {

bool is_word_byte(char c) {
  const auto u = static_cast<unsigned char>(c);
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '#' ||
         u >= 0x80;
}

// Whether `term` (words separated by single spaces) equals `words` from `at` on.
bool phrase_at(const std::vector<std::string>& words, std::size_t at, std::string_view term) {
  std::size_t i = at;
  while (!term.empty()) {
    const std::size_t space = std::min(term.find(' '), term.size());
    if (i >= words.size() || words[i] != term.substr(0, space)) return false;
    term.remove_prefix(std::min(space + 1, term.size()));
    ++i;
  }
  return true;
}

bool any_term(const std::vector<std::string>& words, const ContextTerms& terms) {
  for (std::size_t at = 0; at < words.size(); ++at)
    for (const std::string_view term : terms)
      if (phrase_at(words, at, term)) return true;
  return false;
}

std::vector<std::string> reversed(std::vector<std::string> words) {
  std::reverse(words.begin(), words.end());
  return words;
}

// Whether cell[at] ends a sentence: ".", "!" or "?" before whitespace, after
// a word of 4 bytes or more or one with a digit ("on file.", not "Soc.").
bool sentence_end(std::string_view cell, std::size_t at) {
  if (std::string_view(".!?").find(cell[at]) == std::string_view::npos || at + 1 >= cell.size() ||
      !std::isspace(static_cast<unsigned char>(cell[at + 1])))
    return false;
  std::size_t start = at;
  bool digit = false;
  while (start > 0 && is_word_byte(cell[start - 1]))
    digit |= std::isdigit(static_cast<unsigned char>(cell[--start])) != 0;
  return at - start >= 4 || digit;
}

}  // namespace

std::vector<std::string> words_before(std::string_view cell, std::size_t begin, std::size_t count) {
  std::vector<std::string> words;
  std::size_t end = std::min(begin, cell.size());
  while (words.size() < count) {
    while (end > 0 && !is_word_byte(cell[end - 1])) {
      if (sentence_end(cell, end - 1)) return reversed(std::move(words));
      --end;
    }
    if (end == 0) break;
    std::size_t start = end;
    while (start > 0 && is_word_byte(cell[start - 1])) --start;
    words.push_back(ascii_lowered(cell.substr(start, end - start)));
    end = start;
  }
  return reversed(std::move(words));
}

std::vector<std::string> words_between(std::string_view cell, std::size_t from, std::size_t to) {
  to = std::min(to, cell.size());
  std::vector<std::string> words;
  std::size_t at = from;
  while (at < to) {
    while (at < to && !is_word_byte(cell[at])) ++at;
    std::size_t end = at;
    while (end < to && is_word_byte(cell[end])) ++end;
    if (end > at) words.push_back(ascii_lowered(cell.substr(at, end - at)));
    at = end;
  }
  return words;
}

bool has_context(const std::vector<std::string>& words,
                 const std::vector<std::string>& header_tokens, const ContextTerms& terms) {
  return any_term(words, terms) || any_term(header_tokens, terms);
}

bool window_has(std::string_view cell, std::size_t begin, std::size_t end, std::size_t span,
                const ContextTerms& terms) {
  // Each window widened at its far edge so that no word is cut, and cut
  // where a sentence ends.
  std::size_t left = begin > span ? begin - span : 0;
  while (left > 0 && is_word_byte(cell[left - 1])) --left;
  for (std::size_t at = begin; at > left; --at)
    if (sentence_end(cell, at - 1)) left = at;
  std::size_t right = std::min(end + span, cell.size());
  while (right < cell.size() && is_word_byte(cell[right])) ++right;
  for (std::size_t at = end; at < right; ++at)
    if (sentence_end(cell, at)) right = at;
  return any_term(words_between(cell, left, begin), terms) ||
         any_term(words_between(cell, end, right), terms);
}

}  // namespace nss::pii

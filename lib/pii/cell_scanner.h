// Personal data inside one cell of free text: the recognizers of
// pii/recognizers.h run on the cell (only those its prefilter says can
// match, so a plain number or a word costs one pass over its bytes), and
// overlapping candidates resolved as Presidio resolves them: the best
// score, then the longest span, then the first, wins.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "pii/entity.h"

namespace nss::pii {

struct Span {
  std::size_t begin = 0, end = 0;  // byte offsets into the cell
  Entity entity = Entity::kEmail;
  double score = 0;
};

class CellScanner {
 public:
  /// A scanner for `entities` in the cells of a column whose header has
  /// `header_tokens` (pii/header_hints.h's tokenize_header): they count as
  /// context words, as Presidio's analyze(context=...) does.
  CellScanner(std::vector<Entity> entities, std::vector<std::string> header_tokens);

  /// The detected spans of `cell` (any bytes), left to right, none overlapping.
  std::vector<Span> scan(std::string_view cell) const;

 private:
  std::vector<Entity> entities_;
  std::vector<std::string> header_tokens_;
  std::vector<std::size_t> active_;  // indices into recognizers()
  bool header_is_context_ = false;   // a header word is some recognizer's context
};

}  // namespace nss::pii

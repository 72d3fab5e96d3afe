#include "evaluate/text_structure.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <unicode/uchar.h>

#include "core/utf8.h"
#include "evaluate/distribution.h"
#include "evaluate/reference_random.h"

namespace nss::evaluate {
namespace {

// Python's \w on str (str.isalnum() or '_'): a letter (L*), a number (N*:
// also "²", "½") or a character with a numeric value, never a combining mark
// (Devanagari vowel signs, a decomposed accent). ICU, not the C library,
// which counts marks as alphanumeric and "²" as not.
bool is_word_character(char32_t c) {
  if (c < 0x80) return std::isalnum(static_cast<int>(c)) || c == '_';
  const auto code = static_cast<UChar32>(c);
  return (U_GET_GC_MASK(code) & (U_GC_L_MASK | U_GC_N_MASK)) != 0 ||
         u_getNumericValue(code) != U_NO_NUMERIC_VALUE;
}

// Python's str.isspace(), which strip() uses: ASCII whitespace and the
// separators 0x1c-0x1f, else Unicode White_Space (with the no-break spaces
// U+00A0, U+2007 and U+202F that the C library leaves out).
bool is_space(char32_t c) {
  if (c < 0x80) return std::isspace(static_cast<int>(c)) != 0 || (c >= 0x1c && c <= 0x1f);
  return u_isUWhiteSpace(static_cast<UChar32>(c)) != 0;
}

bool is_sentence_end(char32_t c) {
  switch (c) {
    case U'.':
    case U'\u3002':
    case U'\uFE00':
    case U'?':
    case U'\uFF1F':
    case U'\u061F':
    case U'\u2E2E':
    case U'!':
    case U'\uFF01':
    case U'\u2026':
    case U':':
    case U'\u0964':
    case U'\u0DF4':
    case U'\u1362':
    case U'\u104B':
      return true;
    default:
      return false;
  }
}

Column statistic_column(Dtype dtype) {
  Column column;
  column.dtype = dtype;
  return column;
}

void append(Column& column, double value) {
  column.numbers.push_back(value);
  column.missing.push_back(std::isnan(value) ? 1 : 0);
}

// The three statistic columns of one text column's non-missing records.
std::array<Column, 3> statistics_of(const Column& text) {
  std::array<Column, 3> out = {statistic_column(Dtype::kInt64), statistic_column(Dtype::kFloat64),
                               statistic_column(Dtype::kFloat64)};
  for (std::size_t r = 0; r < text.rows(); ++r) {
    if (text.is_missing(r)) continue;
    const TextStatistics s = text_statistics(text.numeric() ? text.key(r) : text.texts[r]);
    append(out[0], static_cast<double>(s.sentences));
    append(out[1], s.words_per_sentence);
    append(out[2], s.characters_per_word);
  }
  return out;
}

}  // namespace

TextStatistics text_statistics(const std::string& text) {
  const std::u32string code = decode_utf8_lossy(text);
  TextStatistics s;
  bool in_sentence = false, sentence_has_text = false, in_word = false;
  long words = 0, word_characters = 0;
  for (const char32_t c : code) {
    if (is_sentence_end(c)) {
      s.sentences += in_sentence && sentence_has_text;
      in_sentence = sentence_has_text = false;
    } else {
      in_sentence = true;
      sentence_has_text = sentence_has_text || !is_space(c);
    }
    if (is_word_character(c)) {
      words += !in_word;
      ++word_characters;
      in_word = true;
    } else {
      in_word = false;
    }
  }
  s.sentences += in_sentence && sentence_has_text;
  s.words_per_sentence =
      static_cast<double>(words) / static_cast<double>(std::max(1L, s.sentences));
  s.characters_per_word =
      words == 0 ? std::nan("") : static_cast<double>(word_characters) / static_cast<double>(words);
  return s;
}

double text_curve(double d) {
  if (d > 0.8) return 1.5;
  if (d < 0.12) return 10;
  return -12.5 * d + 11.5;
}

TextStructureResult measure_text_structure(const EvaluationTables& tables) {
  TextStructureResult out;
  double sum = 0;
  for (std::size_t c = 0; c < tables.training_types.size(); ++c) {
    if (tables.training_types[c] != FieldType::kText) continue;
    const auto train = statistics_of(tables.training.columns[c]);
    const auto synth = statistics_of(tables.synthetic.columns[c]);
    double distances = 0;
    for (std::size_t k = 0; k < 3; ++k) {
      const ColumnDistribution compared = compare_column("", train[k], synth[k]);
      distances += compared.distance.value_or(0);
    }
    const double average = distances / 3;
    TextColumnStructure column{tables.training.columns[c].name,
                               finalize(average, text_curve(average))};
    sum += *column.score.score;
    out.columns.push_back(std::move(column));
  }
  if (out.columns.empty()) {
    out.score = unavailable("no free-text columns");
    return out;
  }
  const double mean = sum / static_cast<double>(out.columns.size());
  out.score = finalize(mean, mean);
  return out;
}

}  // namespace nss::evaluate

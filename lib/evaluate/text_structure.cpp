#include "evaluate/text_structure.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <clocale>
#include <cmath>
#include <cwctype>
#include <locale.h>

#include "evaluate/distribution.h"
#include "evaluate/reference_random.h"

namespace nss::evaluate {
namespace {

// Decodes UTF-8 into code points; an invalid byte stands for itself.
std::u32string decode_utf8(const std::string& text) {
  std::u32string out;
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    const int length = byte < 0x80         ? 1
                       : (byte >> 5) == 6  ? 2
                       : (byte >> 4) == 14 ? 3
                       : (byte >> 3) == 30 ? 4
                                           : 0;
    char32_t code = length == 1   ? byte
                    : length == 2 ? byte & 0x1f
                    : length == 3 ? byte & 0x0f
                                  : byte & 0x07;
    bool valid = length > 0 && i + static_cast<std::size_t>(length) <= text.size();
    for (int k = 1; valid && k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + static_cast<std::size_t>(k)]);
      valid = (next >> 6) == 2;
      code = (code << 6) | (next & 0x3f);
    }
    if (!valid) {
      out.push_back(byte);
      ++i;
      continue;
    }
    out.push_back(code);
    i += static_cast<std::size_t>(length);
  }
  return out;
}

locale_t utf8_locale() {
  static const locale_t locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(0));
  return locale;
}

bool is_word_character(char32_t c) {
  if (c < 0x80) return std::isalnum(static_cast<int>(c)) || c == '_';
  const locale_t locale = utf8_locale();
  return locale != static_cast<locale_t>(0) && iswalnum_l(static_cast<wint_t>(c), locale);
}

bool is_space(char32_t c) {
  if (c < 0x80) return std::isspace(static_cast<int>(c)) != 0 || (c >= 0x1c && c <= 0x1f);
  const locale_t locale = utf8_locale();
  return c == 0x85 ||
         (locale != static_cast<locale_t>(0) && iswspace_l(static_cast<wint_t>(c), locale));
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
  const std::u32string code = decode_utf8(text);
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

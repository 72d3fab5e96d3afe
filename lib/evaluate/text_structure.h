// Text structure similarity of the free-text columns: per record its
// sentence count, words per sentence and characters per word, compared
// between the training and the synthetic table like any column (NeMo Safe
// Synthesizer's text_structure_similarity; no model needed).
#pragma once

#include <string>

#include "evaluate/evaluation_result.h"
#include "evaluate/evaluation_tables.h"

namespace nss::evaluate {

struct TextStatistics {
  long sentences = 0;
  double words_per_sentence = 0;
  double characters_per_word = 0;  // NaN without words
};

/// One record's statistics: sentences are runs between . ? ! : and their
/// CJK/Arabic/Devanagari kin that hold a non-space character; words are
/// runs of letters, digits and '_' (UTF-8 decoded; an invalid sequence
/// reads as U+FFFD, as Python's errors="replace" reads it).
TextStatistics text_statistics(const std::string& text);

/// 1.5 above 0.8, 10 below 0.12, else -12.5 d + 11.5.
double text_curve(double distance);

TextStructureResult measure_text_structure(const EvaluationTables& tables);

}  // namespace nss::evaluate

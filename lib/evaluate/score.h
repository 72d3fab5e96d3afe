// A score of the evaluation as NeMo Safe Synthesizer reports one: the raw
// value, the 0-10 score, its grade and, when it cannot be computed, why.
#pragma once

#include <optional>
#include <string>

namespace nss::evaluate {

struct Score {
  std::optional<double> raw;    // the measured quantity, rounded to 4 digits
  std::optional<double> score;  // 0-10, rounded to 0.1; empty: unavailable
  std::string grade = "Unavailable";
  std::string notes;  // why it is unavailable (or a caveat); empty: none
  bool available() const { return score.has_value(); }
};

/// Poor [0, 2), Moderate [2, 4), Good [4, 6), Very Good [6, 8), Excellent
/// [8, 10]; "Unavailable" without a score.
std::string score_to_grade(std::optional<double> score);

/// How a component's numbers are rounded: Python's round or numpy's.
enum class Rounding { kPython, kNumpy };

/// raw rounded to 4 digits, score rounded to 0.1 and clamped to [0, 10],
/// graded (NeMo Safe Synthesizer's EvaluationScore.finalize).
Score finalize(double raw, double score, Rounding raw_rounding = Rounding::kPython,
               Rounding score_rounding = Rounding::kPython);

/// An unavailable score carrying `notes`.
Score unavailable(std::string notes = "");

}  // namespace nss::evaluate

#include "evaluate/score.h"

#include <algorithm>
#include <cmath>

#include "evaluate/reference_random.h"

namespace nss::evaluate {
namespace {

double rounded(double x, int digits, Rounding how) {
  return how == Rounding::kPython ? python_round(x, digits) : numpy_round(x, digits);
}

}  // namespace

std::string score_to_grade(std::optional<double> score) {
  if (!score) return "Unavailable";
  static const char* const kGrades[] = {"Poor", "Moderate", "Good", "Very Good", "Excellent"};
  const long index = std::clamp(static_cast<long>(*score) / 2, 0L, 4L);
  return kGrades[index];
}

Score finalize(double raw, double score, Rounding raw_rounding, Rounding score_rounding) {
  if (std::isnan(raw) || std::isnan(score)) return unavailable();
  Score out;
  out.raw = rounded(raw, 4, raw_rounding);
  out.score = std::clamp(rounded(score, 1, score_rounding), 0.0, 10.0);
  out.grade = score_to_grade(out.score);
  return out;
}

Score unavailable(std::string notes) {
  Score out;
  out.notes = std::move(notes);
  return out;
}

}  // namespace nss::evaluate

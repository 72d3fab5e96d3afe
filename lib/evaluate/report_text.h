// report.html's text helpers (report_html.cpp, report_charts.cpp): numbers
// as the page shows them, grades' names and colours, UTF-8-aware shortening.
#pragma once

#include <cstddef>
#include <string>

#include "evaluate/score.h"

namespace nss::evaluate::report {

template <typename... Parts>
void append(std::string& out, const Parts&... parts) {
  (out.append(parts), ...);
}

/// `value` with `decimals` decimals; "n/a" when not finite.
std::string fixed(double value, int decimals);
/// `value` to a few significant digits (epsilon, delta).
std::string significant(double value);
/// 12,345.
std::string thousands(std::size_t count);
/// 12.3%.
std::string percent(double share);
/// One decimal, empty when unavailable (the data-value marker).
std::string score_value(const Score& score);
/// One decimal, "n/a" when unavailable.
std::string score_text(const Score& score);
/// Code points in `text` (an invalid UTF-8 sequence counts one, as U+FFFD).
std::size_t character_count(const std::string& text);
/// At most `max_characters` code points, an ellipsis when cut.
std::string shorten(const std::string& text, std::size_t max_characters);
/// The CSS class of a grade's badge.
std::string grade_class(const std::string& grade);
/// A grade's colour.
std::string grade_colour(const std::string& grade);

}  // namespace nss::evaluate::report

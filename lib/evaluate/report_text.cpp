#include "evaluate/report_text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "core/utf8.h"
#include "evaluate/report_html.h"

namespace nss::evaluate {
namespace report {

// ----------------------------------------------------------------- text and numbers

std::string fixed(double value, int decimals) {
  if (!std::isfinite(value)) return "n/a";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  std::string text = buffer;
  // "-0.0" reads as a sign the data does not have.
  if (text[0] == '-' && text.find_first_not_of("-0.") == std::string::npos) text.erase(0, 1);
  return text;
}

std::string significant(double value) {
  if (!std::isfinite(value)) return "n/a";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.4g", value);
  return buffer;
}

std::string thousands(std::size_t count) {
  std::string digits = std::to_string(count);
  for (long at = static_cast<long>(digits.size()) - 3; at > 0; at -= 3) digits.insert(at, ",");
  return digits;
}

std::string percent(double share) {
  return std::isfinite(share) ? fixed(100.0 * share, 1) + "%" : "n/a";
}

std::string score_value(const Score& score) {
  return score.score ? fixed(*score.score, 1) : "";
}

std::string score_text(const Score& score) {
  return score.score ? fixed(*score.score, 1) : "n/a";
}

std::size_t character_count(const std::string& text) {
  return decode_utf8_lossy(text).size();
}

// At most `max_characters` characters of `text`, cut on a character boundary.
std::string shorten(const std::string& text, std::size_t max_characters) {
  std::size_t at = 0, characters = 0;
  while (at < text.size() && characters < max_characters) {
    at += std::max<std::size_t>(1, utf8_character_length(text, at));
    ++characters;
  }
  return at < text.size() ? text.substr(0, at) + "\u2026" : text;
}

std::string grade_class(const std::string& grade) {
  static const std::map<std::string, std::string> kClasses = {{"Excellent", "excellent"},
                                                              {"Very Good", "very-good"},
                                                              {"Good", "good"},
                                                              {"Moderate", "moderate"},
                                                              {"Poor", "poor"}};
  const auto found = kClasses.find(grade);
  return "grade-" + (found == kClasses.end() ? std::string("unavailable") : found->second);
}

std::string grade_colour(const std::string& grade) {
  static const std::map<std::string, std::string> kColours = {{"Excellent", "#1a7f37"},
                                                              {"Very Good", "#5a9e2f"},
                                                              {"Good", "#b58900"},
                                                              {"Moderate", "#d9731a"},
                                                              {"Poor", "#c62828"}};
  const auto found = kColours.find(grade);
  return found == kColours.end() ? "#8a8a8a" : found->second;
}

}  // namespace report

std::string html_escape(const std::string& text) {
  const std::string valid = utf8_lossy(text);
  std::string out;
  out.reserve(valid.size() + valid.size() / 8);
  for (const char c : valid) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte < 0x20 && byte != '\t' && byte != '\n' && byte != '\r') || byte == 0x7F) {
      out += "\uFFFD";  // not text an HTML page may hold
      continue;
    }
    switch (byte) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

}  // namespace nss::evaluate

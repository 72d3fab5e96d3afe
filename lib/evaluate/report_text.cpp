#include "evaluate/report_text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

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

// The byte length of the well-formed UTF-8 character at `at` (Unicode's
// table 3-7: no overlong form, surrogate or code point past U+10FFFF), or 0.
std::size_t valid_character(const std::string& text, std::size_t at) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[at + k]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return 1;
  const std::size_t length = lead >= 0xC2 && lead <= 0xDF   ? 2
                             : lead >= 0xE0 && lead <= 0xEF ? 3
                             : lead >= 0xF0 && lead <= 0xF4 ? 4
                                                            : 0;
  if (length == 0 || at + length > text.size()) return 0;
  const unsigned char low = lead == 0xE0 ? 0xA0 : lead == 0xF0 ? 0x90 : 0x80;
  const unsigned char high = lead == 0xED ? 0x9F : lead == 0xF4 ? 0x8F : 0xBF;
  if (byte(1) < low || byte(1) > high) return 0;
  for (std::size_t k = 2; k < length; ++k) {
    if ((byte(k) & 0xC0) != 0x80) return 0;
  }
  return length;
}

std::size_t character_count(const std::string& text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char byte) {
    return (static_cast<unsigned char>(byte) & 0xC0) != 0x80;
  }));
}

// At most `max_characters` characters of `text`, cut on a character boundary.
std::string shorten(const std::string& text, std::size_t max_characters) {
  std::size_t at = 0, characters = 0;
  while (at < text.size() && characters < max_characters) {
    at += std::max<std::size_t>(1, valid_character(text, at));
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
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (std::size_t at = 0; at < text.size();) {
    const unsigned char byte = static_cast<unsigned char>(text[at]);
    const std::size_t length = report::valid_character(text, at);
    if (length == 0 || (byte < 0x20 && byte != '\t' && byte != '\n' && byte != '\r') ||
        byte == 0x7F) {
      out += "\uFFFD";  // not text an HTML page may hold
      ++at;
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
        out.append(text, at, length);
    }
    at += length;
  }
  return out;
}

}  // namespace nss::evaluate

// ASCII character tests and transforms that the PII rules share: the
// formats they read (card numbers, SSNs, phone numbers, host names) are
// defined on ASCII, whatever the locale.
#pragma once

#include <string>
#include <string_view>

namespace nss::pii {

inline bool is_ascii_digit(char c) {
  return c >= '0' && c <= '9';
}

inline char ascii_lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

/// The ASCII digits of `text`, in order.
inline std::string ascii_digits(std::string_view text) {
  std::string out;
  for (const char c : text)
    if (is_ascii_digit(c)) out.push_back(c);
  return out;
}

/// `text` with A-Z lowercased, every other byte kept.
inline std::string ascii_lowered(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = ascii_lower(c);
  return out;
}

}  // namespace nss::pii

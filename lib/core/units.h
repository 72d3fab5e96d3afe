// The one place numbers become text for people: byte sizes ("256MiB",
// "1.5GiB") in both directions, shares, seconds and durations.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

namespace nss {

/// Parses "4194304", "4MiB", "1.5 GiB", "2GB" (powers of 1000) ...; throws UsageError.
std::uint64_t parse_bytes(const std::string& text);

/// Formats with binary units: "1.50 GiB", "512 B".
std::string format_bytes(double bytes);
template <class Integer, class = std::enable_if_t<std::is_integral_v<Integer>>>
std::string format_bytes(Integer bytes) {
  return format_bytes(static_cast<double>(bytes));
}

/// A fraction as a percentage with `decimals` decimals: 0.125 -> "12.5%";
/// `sign` writes "+" before a positive one ("+1.2%", a deviation).
std::string format_percent(double fraction, int decimals = 1, bool sign = false);

/// Seconds for messages: three significant digits ("0.125 s", "42 s"), or
/// `decimals` fixed decimals ("60.0 s").
std::string format_seconds(double seconds, int decimals = -1);

/// A run's remaining time: "3m05s", "2h07m" (negative as 0).
std::string format_duration(double seconds);

}  // namespace nss

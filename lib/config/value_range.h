// The values a number key accepts. Every number field of the schema
// (config.h) declares one: validation refuses a value outside it (exit 2,
// naming the key, the value and the range) and the reference
// (docs/configuration.md) publishes it. The bounds are sane upper limits
// (a thread count, a context length, a step count) well beyond any real run;
// products of several keys are bounded apart (size_checks.h).
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

namespace nss::config {

/// Keys that are not numbers have no range (the reader checks their type).
template <class T>
struct Range {};

/// An integer key: [min, max], both included.
template <>
struct Range<std::int64_t> {
  constexpr Range(std::int64_t min_value, std::int64_t max_value)
      : min(min_value), max(max_value) {}
  constexpr bool contains(std::int64_t value) const { return value >= min && value <= max; }
  /// "[0, 256]".
  std::string text() const;

  std::int64_t min, max;
};

/// A real key: from min to max, either end included or not.
template <>
struct Range<double> {
  /// [min, max]; open_closed and closed_open exclude one end.
  constexpr Range(double min_value, double max_value, bool min_included = true,
                  bool max_included = true)
      : min(min_value), max(max_value), includes_min(min_included), includes_max(max_included) {}
  constexpr bool contains(double value) const {
    return (includes_min ? value >= min : value > min) &&
           (includes_max ? value <= max : value < max);
  }
  /// "(0, 1]".
  std::string text() const;

  double min, max;
  bool includes_min, includes_max;
};

/// Whether keys of type T declare a range (numbers do).
template <class T>
inline constexpr bool has_range_v = std::is_same_v<T, std::int64_t> || std::is_same_v<T, double>;

/// (min, max]: e.g. a learning rate, which must be positive.
constexpr Range<double> open_closed(double min, double max) {
  return {min, max, false, true};
}

/// [min, max): e.g. an Adam beta, which must stay below 1.
constexpr Range<double> closed_open(double min, double max) {
  return {min, max, true, false};
}

}  // namespace nss::config

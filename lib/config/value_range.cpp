#include "config/value_range.h"

#include <cstdio>

namespace nss::config {
namespace {

// The shortest text of a bound: 604800, 1e+12, 0.5.
std::string number_text(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.15g", value);
  return text;
}

}  // namespace

std::string Range<std::int64_t>::text() const {
  return "[" + std::to_string(min) + ", " + std::to_string(max) + "]";
}

std::string Range<double>::text() const {
  return (includes_min ? "[" : "(") + number_text(min) + ", " + number_text(max) +
         (includes_max ? "]" : ")");
}

}  // namespace nss::config

#include "core/units.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/error.h"

namespace nss {

std::uint64_t parse_bytes(const std::string& text) {
  const char* begin = text.c_str();
  char* end = nullptr;
  const double number = std::strtod(begin, &end);
  if (end == begin || !std::isfinite(number) || number < 0)
    throw UsageError("units", "cannot parse byte size '" + text + "'",
                     "write a number with an optional unit, e.g. 256MiB or 4GB");
  std::string unit(end);
  unit.erase(0, unit.find_first_not_of(' '));
  for (auto& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  struct Unit {
    const char* name;
    double factor;
  };
  static const Unit kUnits[] = {{"", 1},
                                {"b", 1},
                                {"k", 1024.0},
                                {"kib", 1024.0},
                                {"kb", 1e3},
                                {"m", 1048576.0},
                                {"mib", 1048576.0},
                                {"mb", 1e6},
                                {"g", 1073741824.0},
                                {"gib", 1073741824.0},
                                {"gb", 1e9},
                                {"t", 1099511627776.0},
                                {"tib", 1099511627776.0},
                                {"tb", 1e12}};
  for (const auto& u : kUnits)
    if (unit == u.name) return static_cast<std::uint64_t>(std::llround(number * u.factor));
  throw UsageError("units", "unknown unit in byte size '" + text + "'",
                   "use B, KiB, MiB, GiB, TiB (powers of 1024) or KB, MB, GB, TB");
}

std::string format_bytes(double bytes) {
  static const char* kNames[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int unit = 0;
  double value = bytes;
  while (std::fabs(value) >= 1024.0 && unit < 5) {
    value /= 1024.0;
    ++unit;
  }
  char buffer[64];
  if (unit == 0)
    std::snprintf(buffer, sizeof buffer, "%.0f B", value);
  else
    std::snprintf(buffer, sizeof buffer, "%.2f %s", value, kNames[unit]);
  return buffer;
}

std::string format_percent(double fraction, int decimals, bool sign) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, sign ? "%+.*f%%" : "%.*f%%", decimals, fraction * 100);
  return buffer;
}

std::string format_seconds(double seconds, int decimals) {
  char buffer[64];
  if (decimals < 0)
    std::snprintf(buffer, sizeof buffer, "%.3g s", seconds);
  else
    std::snprintf(buffer, sizeof buffer, "%.*f s", decimals, seconds);
  return buffer;
}

std::string format_duration(double seconds) {
  const auto total = static_cast<long long>(std::max(0.0, seconds));
  char buffer[32];
  if (total >= 3600)
    std::snprintf(buffer, sizeof buffer, "%lldh%02lldm", total / 3600, total / 60 % 60);
  else
    std::snprintf(buffer, sizeof buffer, "%lldm%02llds", total / 60, total % 60);
  return buffer;
}

}  // namespace nss

#include "pii/dates.h"

#include <cstdio>

#include "pii/ascii_text.h"

namespace nss::pii {
namespace {

struct Field {
  int value = 0;
  int width = 0;
};

// "12-3-2024" as its three digit fields and the one separator between them.
bool split_fields(std::string_view text, Field (&fields)[3], char& separator) {
  int index = 0;
  separator = 0;
  for (const char c : text) {
    if (is_ascii_digit(c)) {
      Field& field = fields[index];
      if (++field.width > 4) return false;
      field.value = field.value * 10 + (c - '0');
      continue;
    }
    if (c != '-' && c != '/' && c != '.') return false;
    if ((separator && c != separator) || fields[index].width == 0 || ++index > 2) return false;
    separator = c;
  }
  return index == 2 && fields[2].width > 0;
}

int full_year(const Field& year) {
  if (year.width == 4) return year.value;
  return year.value > 30 ? 1900 + year.value : 2000 + year.value;
}

std::optional<WrittenDate> ordered(const Field& year, const Field& month, const Field& day,
                                   DateOrder order, char separator) {
  if (month.width > 2 || day.width > 2 || (year.width != 4 && year.width != 2)) return std::nullopt;
  if (order == DateOrder::kYearMonthDay && year.width != 4) return std::nullopt;
  WrittenDate written;
  written.date = {full_year(year), month.value, day.value};
  if (!is_calendar_date(written.date)) return std::nullopt;
  written.order = order;
  written.separator = separator;
  written.year_width = year.width;
  written.month_width = month.width;
  written.day_width = day.width;
  return written;
}

std::string_view trimmed(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

}  // namespace

bool is_calendar_date(const CalendarDate& date) {
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (date.year < 1 || date.year > 9999 || date.month < 1 || date.month > 12 || date.day < 1)
    return false;
  const bool leap = (date.year % 4 == 0 && date.year % 100 != 0) || date.year % 400 == 0;
  return date.day <= kDays[date.month - 1] + (date.month == 2 && leap ? 1 : 0);
}

std::optional<WrittenDate> read_date(std::string_view text) {
  Field fields[3];
  char separator = 0;
  if (!split_fields(trimmed(text), fields, separator)) return std::nullopt;
  if (fields[0].width == 4)
    return ordered(fields[0], fields[1], fields[2], DateOrder::kYearMonthDay, separator);
  if (separator == '.')
    return ordered(fields[2], fields[1], fields[0], DateOrder::kDayMonthYear, separator);
  if (fields[0].value > 12)  // 25/12/1990 can only be day first
    return ordered(fields[2], fields[1], fields[0], DateOrder::kDayMonthYear, separator);
  return ordered(fields[2], fields[0], fields[1], DateOrder::kMonthDayYear, separator);
}

std::string write_date(const CalendarDate& date, const WrittenDate& like) {
  char year[8], month[4], day[4];
  std::snprintf(year, sizeof year, "%0*d", like.year_width,
                like.year_width == 2 ? date.year % 100 : date.year);
  std::snprintf(month, sizeof month, "%0*d", like.month_width, date.month);
  std::snprintf(day, sizeof day, "%0*d", like.day_width, date.day);
  const std::string s(1, like.separator);
  switch (like.order) {
    case DateOrder::kYearMonthDay:
      return year + s + month + s + day;
    case DateOrder::kMonthDayYear:
      return month + s + day + s + year;
    case DateOrder::kDayMonthYear:
      return day + s + month + s + year;
  }
  return year + s + month + s + day;
}

// Howard Hinnant's days_from_civil and civil_from_days (public domain).
long days_from_civil(const CalendarDate& date) {
  const long y = date.year - (date.month <= 2 ? 1 : 0);
  const long era = (y >= 0 ? y : y - 399) / 400;
  const long yoe = y - era * 400;
  const long mp = (date.month + 9) % 12;
  const long doy = (153 * mp + 2) / 5 + date.day - 1;
  const long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

CalendarDate civil_from_days(long days) {
  days += 719468;
  const long era = (days >= 0 ? days : days - 146096) / 146097;
  const long doe = days - era * 146097;
  const long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const long mp = (5 * doy + 2) / 153;
  const int day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  const int month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  return {static_cast<int>(yoe + era * 400 + (month <= 2 ? 1 : 0)), month, day};
}

}  // namespace nss::pii

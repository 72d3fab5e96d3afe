// Calendar dates as people write them in a table cell: year first
// (2024-03-15, 2024/3/15), month first as in the US (03/15/2024, 3-15-84)
// and day first with full stops (15.03.2024). One reader for the date of
// birth's value rule, canonical form and surrogate, so that they agree on
// what a date is and on how it was written.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace nss::pii {

enum class DateOrder { kYearMonthDay, kMonthDayYear, kDayMonthYear };

struct CalendarDate {
  int year = 0, month = 0, day = 0;
};

/// A date and the way it was written: the order of its fields, the
/// separator, and each field's width (a 2-digit year stays 2 digits, a
/// zero-padded month stays padded).
struct WrittenDate {
  CalendarDate date;
  DateOrder order = DateOrder::kYearMonthDay;
  char separator = '-';
  int year_width = 4, month_width = 2, day_width = 2;
};

/// Whether year-month-day names a day of the proleptic Gregorian calendar.
bool is_calendar_date(const CalendarDate& date);

/// The real date `text` (ASCII whitespace around it ignored) writes:
/// YYYY-M-D with "-", "/" or "."; M/D/Y with "/" or "-" (D/M/Y when the first
/// field cannot be a month); D.M.Y with "."; Y of 4 digits, or of 2 when it
/// comes last (31–99 read as 19xx, 00–30 as 20xx). nullopt
/// for anything else, an impossible date (2023-02-29) included.
std::optional<WrittenDate> read_date(std::string_view text);

/// `date` written as `like` was written.
std::string write_date(const CalendarDate& date, const WrittenDate& like);

/// Days since 1970-01-01 of a calendar date, and back.
long days_from_civil(const CalendarDate& date);
CalendarDate civil_from_days(long days);

}  // namespace nss::pii

// Dates as cells write them: the three orders, widths and separators kept,
// impossible dates refused, and the day count both ways.
#include "pii/dates.h"

#include <gtest/gtest.h>

namespace nss::pii {
namespace {

TEST(Dates, ReadsTheThreeOrders) {
  const auto iso = read_date(" 1984-02-29 ");
  ASSERT_TRUE(iso);
  EXPECT_EQ(iso->order, DateOrder::kYearMonthDay);
  EXPECT_EQ(iso->date.day, 29);
  const auto us = read_date("3/15/1990");
  ASSERT_TRUE(us);
  EXPECT_EQ(us->order, DateOrder::kMonthDayYear);
  EXPECT_EQ(us->month_width, 1);
  const auto dotted = read_date("15.03.90");
  ASSERT_TRUE(dotted);
  EXPECT_EQ(dotted->order, DateOrder::kDayMonthYear);
  EXPECT_EQ(dotted->date.year, 1990);
  const auto day_first = read_date("25/12/2001");
  ASSERT_TRUE(day_first);
  EXPECT_EQ(day_first->order, DateOrder::kDayMonthYear);
  EXPECT_EQ(read_date("1/2/05")->date.year, 2005);
}

TEST(Dates, RefusesWhatIsNoDate) {
  for (const char* text :
       {"1983-02-29", "2024-13-01", "2024-04-31", "12/32/2000", "1.2.3.4", "2024-01/15", "20240115",
        "12-34", "", "v1.2.3", "2024-1-1-1", "99/99/99", "123-45-6789"})
    EXPECT_FALSE(read_date(text)) << text;
}

TEST(Dates, WritesAsTheOriginalWasWritten) {
  const auto like = read_date("03.07.1985");
  EXPECT_EQ(write_date({1986, 11, 4}, *like), "04.11.1986");
  EXPECT_EQ(write_date({2003, 1, 9}, *read_date("5/6/99")), "1/9/03");
  EXPECT_EQ(write_date({1970, 1, 1}, *read_date("1999/12/31")), "1970/01/01");
}

TEST(Dates, DayCountsRoundTrip) {
  EXPECT_EQ(days_from_civil({1970, 1, 1}), 0);
  EXPECT_EQ(days_from_civil({2000, 3, 1}), 11017);
  for (long day = -40000; day < 40000; day += 37) {
    const CalendarDate date = civil_from_days(day);
    EXPECT_TRUE(is_calendar_date(date));
    EXPECT_EQ(days_from_civil(date), day);
  }
}

}  // namespace
}  // namespace nss::pii

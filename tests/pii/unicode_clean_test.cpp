#include "pii/unicode_clean.h"

#include <string>

#include <gtest/gtest.h>

namespace nss::pii {
namespace {

TEST(StdnumCleanTest, StdnumDocExamples) {
  EXPECT_EQ(stdnum_clean("123-456:78 9", " -:"), "123456789");
  EXPECT_EQ(stdnum_clean("1\u20132\u20143\u20154", ""), "1-2-3-4");
}

TEST(StdnumCleanTest, MapsLookAlikesBeforeDeleting) {
  EXPECT_EQ(stdnum_clean("\uFF11\uFF12\uFF13", ""), "123");   // fullwidth digits
  EXPECT_EQ(stdnum_clean("\U0001D7CE\U0001D7FF", ""), "09");  // mathematical digits
  EXPECT_EQ(stdnum_clean("a\u00A0b\u3000c", " "), "abc");     // spaces, then deleted
  EXPECT_EQ(stdnum_clean("`\u2019", ""), "''");               // ASCII ` is mapped too
  EXPECT_EQ(stdnum_clean("1\u16802", ""), "1-2");             // Ogham space mark: a dash
  EXPECT_EQ(stdnum_clean("\uFF1A\u2024\u2044\u066D\u060C", ""), ":./*,");
  EXPECT_EQ(stdnum_clean("caf\u00E9 \u00B2", "-"), "caf\u00E9 \u00B2");  // kept
}

TEST(StdnumCleanTest, EmptyAndInvalidUtf8AreKept) {
  EXPECT_EQ(stdnum_clean("", " -"), "");
  const std::string invalid =
      "\xff"
      "1\xc3"
      "-\xe2\x80";
  EXPECT_EQ(stdnum_clean(invalid, ""), invalid);
  EXPECT_EQ(stdnum_clean(invalid, "-"),
            "\xff"
            "1\xc3"
            "\xe2\x80");
}

TEST(StdnumCleanTest, HugeInputIsLinear) {
  std::string dashes;
  for (int i = 0; i < 1'000'000; ++i) dashes += "\u2013";
  EXPECT_EQ(stdnum_clean(dashes, ""), std::string(1'000'000, '-'));
  EXPECT_EQ(stdnum_clean(dashes, "-"), "");
}

TEST(PythonStripTest, StripsWhatStrIsspaceAccepts) {
  EXPECT_EQ(python_strip(" \t\n\r\v\f abc \x1c\x1f"), "abc");
  EXPECT_EQ(python_strip("\u0085\u00A0\u1680\u2000\u200A\u2028\u2029\u202F\u205F\u3000x y\u3000"),
            "x y");
  EXPECT_EQ(python_strip("\u200Bx\u180E"), "\u200Bx\u180E");  // not whitespace to Python
  EXPECT_EQ(python_strip(""), "");
  EXPECT_EQ(python_strip(" \u3000 "), "");
}

TEST(PythonStripTest, InvalidBytesStopTheStrip) {
  EXPECT_EQ(python_strip(" \xff "), "\xff");
  EXPECT_EQ(python_strip(" \x80\x80 "), "\x80\x80");
  EXPECT_EQ(python_strip("\xe3\x80 "), "\xe3\x80");  // a truncated U+3000 is no space
}

TEST(PythonUpperAsciiTest, UppercasesWhereTheResultIsAscii) {
  EXPECT_EQ(python_upper_ascii("gb82 west"), "GB82 WEST");
  EXPECT_EQ(python_upper_ascii("stra\u00DFe"), "STRASSE");
  EXPECT_EQ(python_upper_ascii("\u0131\u017F\uFB01\uFB03\uFB06"), "ISFIFFIST");
  EXPECT_EQ(python_upper_ascii("\u00E9\u0101"), "\u00E9\u0101");  // uppercase not ASCII: kept
  EXPECT_EQ(python_upper_ascii("\xff"
                               "a"),
            "\xff"
            "A");
}

TEST(PythonDecimalValueTest, ReadsDecimalDigitsOfEveryScript) {
  EXPECT_EQ(python_decimal_value(U'0'), 0);
  EXPECT_EQ(python_decimal_value(U'9'), 9);
  EXPECT_EQ(python_decimal_value(0x0669), 9);   // ARABIC-INDIC DIGIT NINE
  EXPECT_EQ(python_decimal_value(0x096A), 4);   // DEVANAGARI DIGIT FOUR
  EXPECT_EQ(python_decimal_value(0xFF15), 5);   // FULLWIDTH DIGIT FIVE
  EXPECT_EQ(python_decimal_value(0x1FBF9), 9);  // SEGMENTED DIGIT NINE
  EXPECT_EQ(python_decimal_value(0x1FBFA), -1);
  EXPECT_EQ(python_decimal_value(U'a'), -1);
  EXPECT_EQ(python_decimal_value(0x00B2), -1);  // SUPERSCRIPT TWO: a digit, not decimal
  EXPECT_EQ(python_decimal_value(0x2160), -1);  // ROMAN NUMERAL ONE
  EXPECT_EQ(python_decimal_value(0x10FFFF), -1);
  EXPECT_EQ(python_decimal_value(0), -1);
}

}  // namespace
}  // namespace nss::pii

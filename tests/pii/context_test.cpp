// Context words: the five words before a span, whole tokens and phrases,
// the header's tokens, and NSS's character windows.
#include "pii/context.h"

#include <gtest/gtest.h>

namespace nss::pii {
namespace {

TEST(Context, FiveWordsBefore) {
  const std::string cell = "Please file: my Soc. Sec. number, is 123 45 6789";
  EXPECT_EQ(words_before(cell, cell.find("123")),
            (std::vector<std::string>{"my", "soc", "sec", "number", "is"}));
  EXPECT_EQ(words_before(cell, 0), std::vector<std::string>{});
  EXPECT_EQ(words_before("cc# 4111", 4), std::vector<std::string>{"cc#"});
  const std::string two = "License D1234567 on file. Tracking 1Z5310";
  EXPECT_EQ(words_before(two, two.find("1Z")), std::vector<std::string>{"tracking"});
}

TEST(Context, WholeTokensAndPhrases) {
  const ContextTerms terms = {"tin", "soc sec"};
  EXPECT_FALSE(has_context({"continue", "to"}, {}, terms));
  EXPECT_TRUE(has_context({"my", "tin", "is"}, {}, terms));
  EXPECT_TRUE(has_context({"my", "soc", "sec"}, {}, terms));
  EXPECT_FALSE(has_context({"soc", "x", "sec"}, {}, terms));
  EXPECT_TRUE(has_context({}, {"tin"}, terms));
}

TEST(Context, CharacterWindowsOnBothSides) {
  const ContextTerms terms = {"fax"};
  const std::string cell = "555-123-4567 (fax)";
  EXPECT_TRUE(window_has(cell, 0, 12, 24, terms));
  const std::string far = "fax to the main office on the fourth floor: 555-123-4567";
  EXPECT_FALSE(window_has(far, far.find("555"), far.size(), 16, terms));
  EXPECT_TRUE(window_has(far, far.find("555"), far.size(), 60, terms));
  const std::string next = "Call 555-123-4567 after 5pm. Then fax it.";
  EXPECT_FALSE(window_has(next, 5, 17, 24, terms));
}

}  // namespace
}  // namespace nss::pii

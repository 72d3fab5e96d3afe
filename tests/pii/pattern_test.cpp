#include "pii/pattern.h"

#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "core/error.h"

namespace nss::pii {
namespace {

using Span = std::pair<std::size_t, std::size_t>;

std::vector<Span> spans(const Pattern& pattern, std::string_view text) {
  std::vector<Span> out;
  for (const Match& m : pattern.find_all(text)) out.emplace_back(m.begin, m.end);
  return out;
}

TEST(PatternTest, FindsSuccessiveMatches) {
  const Pattern digits("[0-9]+", 0, "digits");
  EXPECT_EQ(spans(digits, "a12b345"), (std::vector<Span>{{1, 3}, {4, 7}}));
  EXPECT_TRUE(digits.find_all("").empty());
  EXPECT_TRUE(digits.find_all("no digits").empty());
}

TEST(PatternTest, EmptyMatchesAreSkipped) {
  const Pattern xs("x*", 0, "xs");
  EXPECT_EQ(spans(xs, "axxbx"), (std::vector<Span>{{1, 3}, {4, 5}}));
  EXPECT_TRUE(xs.find_all("abc").empty());
}

TEST(PatternTest, CaptureGroupsAndBackReferences) {
  const Pattern either("(a)|(b)", 0, "either");
  const std::vector<Match> matches = either.find_all("ab");
  ASSERT_EQ(matches.size(), 2u);
  using Group = std::pair<std::ptrdiff_t, std::ptrdiff_t>;
  EXPECT_EQ(matches[0].groups, (std::vector<Group>{{0, 1}, {-1, -1}}));
  EXPECT_EQ(matches[1].groups, (std::vector<Group>{{-1, -1}, {1, 2}}));
  const Pattern grouped("[0-9]{4}([ -]?)[0-9]{4}\\1[0-9]{4}", 0, "grouped");
  EXPECT_TRUE(grouped.full_match("1234 5678 9012"));
  EXPECT_TRUE(grouped.full_match("123456789012"));
  EXPECT_FALSE(grouped.full_match("1234 5678-9012"));
}

TEST(PatternTest, Flags) {
  EXPECT_TRUE(Pattern("abc", kCaseless, "caseless").full_match("AbC"));
  EXPECT_FALSE(Pattern("abc", 0, "cased").full_match("AbC"));
  EXPECT_TRUE(Pattern("a.b", kDotAll, "dotall").full_match("a\nb"));
  EXPECT_FALSE(Pattern("a.b", 0, "dot").full_match("a\nb"));
  EXPECT_EQ(spans(Pattern("^b", kMultiline, "multiline"), "a\nb"), (std::vector<Span>{{2, 3}}));
  EXPECT_TRUE(Pattern("^b", 0, "single line").find_all("a\nb").empty());
  EXPECT_TRUE(Pattern("STRASSE", kCaseless, "caseless unicode").full_match("strasse"));
}

TEST(PatternTest, UnicodePropertiesOnUtf8) {
  const Pattern word("\\p{Lu}\\p{Ll}+", 0, "capitalised");
  EXPECT_EQ(spans(word, "x \u00C9mile \u00E9"), (std::vector<Span>{{2, 8}}));
  EXPECT_TRUE(Pattern("[0-9]", 0, "ascii digit").find_all("\u0661\u0662").empty());
}

TEST(PatternTest, InvalidUtf8MatchesAroundTheBadBytes) {
  const Pattern digits("[0-9]+", 0, "digits");
  EXPECT_EQ(spans(digits,
                  "12\xff"
                  "34\xc3"),
            (std::vector<Span>{{0, 2}, {3, 5}}));
  EXPECT_EQ(spans(Pattern(".", 0, "any"),
                  "\xff"
                  "a\xe2\x82"),
            (std::vector<Span>{{1, 2}}));
  EXPECT_FALSE(digits.full_match("12\xff"));
  EXPECT_FALSE(Pattern(".*", 0, "anything")
                   .full_match("ab\xff"
                               "cd"));
  EXPECT_EQ(spans(Pattern(".*", 0, "anything"),
                  "ab\xff"
                  "cd"),
            (std::vector<Span>{{0, 2}, {3, 5}}));
  EXPECT_TRUE(Pattern("[0-9]+$", 0, "digits at the end").find_all("12\xff").empty());
}

TEST(PatternTest, LookBehindSeesTheTextBeforeTheStart) {
  const Pattern three("(?<![0-9])[0-9]{3}(?![0-9])", 0, "three");
  EXPECT_EQ(spans(three, "1234 567 89 012"), (std::vector<Span>{{5, 8}, {12, 15}}));
}

TEST(PatternTest, FullMatchBacktracksToTheEnd) {
  const Pattern alternatives("a|ab", 0, "alternatives");
  EXPECT_TRUE(alternatives.full_match("ab"));
  EXPECT_TRUE(alternatives.full_match("a"));
  EXPECT_FALSE(alternatives.full_match("abc"));
  EXPECT_FALSE(alternatives.full_match("xab"));
  EXPECT_FALSE(alternatives.full_match(""));
  EXPECT_TRUE(Pattern("x*", 0, "xs").full_match(""));
}

TEST(PatternTest, CompileErrorsAreInternalErrorsNamingThePattern) {
  try {
    Pattern("(unclosed", 0, "broken pattern");
    FAIL() << "compiled";
  } catch (const InternalError& e) {
    EXPECT_EQ(e.component(), "pii");
    EXPECT_NE(e.message().find("broken pattern"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("(unclosed"), std::string::npos) << e.message();
  }
}

TEST(PatternTest, MatchLimitIsADataErrorNamingThePattern) {
  const Pattern catastrophic("(a+)+$", 0, "catastrophic");
  try {
    catastrophic.find_all(std::string(40, 'a') + "b");
    FAIL() << "matched within the limit";
  } catch (const DataError& e) {
    EXPECT_NE(e.message().find("catastrophic"), std::string::npos) << e.message();
  }
  EXPECT_THROW(catastrophic.full_match(std::string(40, 'a') + "b"), DataError);
}

TEST(PatternTest, HugeInputs) {
  const Pattern five("(?<![0-9])[0-9]{5}(?![0-9])", 0, "five");
  std::string text(10'000'000, 'a');
  EXPECT_TRUE(five.find_all(text).empty());
  text.replace(5'000'000, 5, "12345");
  EXPECT_EQ(spans(five, text), (std::vector<Span>{{5'000'000, 5'000'005}}));
  EXPECT_EQ(Pattern("a", 0, "a").find_all(std::string(1'000'000, 'a')).size(), 1'000'000u);
}

TEST(PatternTest, SharedAcrossThreads) {
  const Pattern words("\\p{L}+", 0, "words");
  const Pattern groups("([a-z])([0-9])", 0, "groups");
  std::vector<std::thread> threads;
  std::vector<std::size_t> counts(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        counts[t] += words.find_all("one two three").size();
        counts[t] += groups.find_all("a1 b2").size();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (std::size_t count : counts) EXPECT_EQ(count, 2000u * 5);
}

}  // namespace
}  // namespace nss::pii

#include "ner/bert_words.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace nss::ner {
namespace {

std::vector<std::string> words(const std::string& text, bool cjk_alone = true) {
  std::vector<std::string> out;
  for (const Word& w : bert_words(text, cjk_alone))
    out.push_back(text.substr(w.begin, w.end - w.begin));
  return out;
}

TEST(BertWordsTest, WhitespaceSeparatesAndPunctuationStandsAlone) {
  EXPECT_EQ(words("Hello,  world!"), (std::vector<std::string>{"Hello", ",", "world", "!"}));
  EXPECT_EQ(words("O'Brien e-mail 3.5"),
            (std::vector<std::string>{"O", "'", "Brien", "e", "-", "mail", "3", ".", "5"}));
  EXPECT_EQ(words("a\u00a0b\u2003c\td\ne"), (std::vector<std::string>{"a", "b", "c", "d", "e"}));
  EXPECT_EQ(words("«quoted» ¿qué?"),
            (std::vector<std::string>{"«", "quoted", "»", "¿", "qué", "?"}));
  EXPECT_TRUE(words("   \t ").empty());
}

TEST(BertWordsTest, DroppedCharactersJoinTheWordAroundThem) {
  EXPECT_EQ(words(std::string("x\0y z", 5)),
            (std::vector<std::string>{std::string("x\0y", 3), "z"}));
  EXPECT_EQ(words("\u200bAlice\u200b Bob"), (std::vector<std::string>{"Alice", "Bob"}));
  EXPECT_EQ(words("a\x07"
                  "b"),
            (std::vector<std::string>{"a\x07"
                                      "b"}));
  // Invalid UTF-8 is U+FFFD, which clean_text drops.
  EXPECT_EQ(words("ab\xff"
                  "cd \xc3"),
            (std::vector<std::string>{"ab\xff"
                                      "cd"}));
}

TEST(BertWordsTest, IdeographsStandAloneWhenTheNormalizerSaysSo) {
  EXPECT_EQ(words("东京tower"), (std::vector<std::string>{"东", "京", "tower"}));
  EXPECT_EQ(words("东京tower", false), (std::vector<std::string>{"东京tower"}));
  // Kana are not CJK ideographs.
  EXPECT_EQ(words("でAliceに"), (std::vector<std::string>{"でAliceに"}));
}

}  // namespace
}  // namespace nss::ner

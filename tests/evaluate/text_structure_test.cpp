// One record's text statistics as NeMo Safe Synthesizer's text structure
// similarity counts them (sentences, words per sentence, characters per
// word); the table-level score against the reference is
// quality_reference_test.
#include "evaluate/text_structure.h"

#include <cmath>

#include <gtest/gtest.h>

namespace nss::evaluate {
namespace {

TEST(TextStatistics, SentencesWordsAndCharacters) {
  const TextStatistics s = text_statistics("Hello world. How are you?");
  EXPECT_EQ(s.sentences, 2);
  EXPECT_DOUBLE_EQ(s.words_per_sentence, 2.5);
  EXPECT_DOUBLE_EQ(s.characters_per_word, 19.0 / 5);
}

TEST(TextStatistics, EmptySentencesAndNoWords) {
  const TextStatistics none = text_statistics("");
  EXPECT_EQ(none.sentences, 0);
  EXPECT_DOUBLE_EQ(none.words_per_sentence, 0);
  EXPECT_TRUE(std::isnan(none.characters_per_word));
  EXPECT_EQ(text_statistics("...  ? !").sentences, 0);  // ends without text between them
  EXPECT_EQ(text_statistics("a: b").sentences, 2);
}

TEST(TextStatistics, UnicodeLettersAndSentenceEnds) {
  const TextStatistics s = text_statistics("caf\u00e9 na\u00efve\u3002\u4f60\u597d\uff01");
  EXPECT_EQ(s.sentences, 2);
  EXPECT_DOUBLE_EQ(s.words_per_sentence, 1.5);  // café, naïve, 你好
  EXPECT_DOUBLE_EQ(s.characters_per_word, 11.0 / 3);
}

TEST(TextStatistics, InvalidUtf8ReadsAsReplacementCharacters) {
  // \xE9 alone is not UTF-8: it reads as U+FFFD (not a letter), as Python's
  // errors="replace" reads it, so "caf\xE9ok" is two words.
  const TextStatistics s = text_statistics("caf\xE9ok \xE2\x82x");
  EXPECT_EQ(s.sentences, 1);
  EXPECT_DOUBLE_EQ(s.words_per_sentence, 3);
  EXPECT_DOUBLE_EQ(s.characters_per_word, 6.0 / 3);
}

}  // namespace
}  // namespace nss::evaluate

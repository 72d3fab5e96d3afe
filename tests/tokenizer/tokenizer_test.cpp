// Internals of the C++ tokenizer: GPT-2's byte alphabet, lossy UTF-8, the BPE
// merge order, WordPiece's greedy match and BERT's pipeline, added-token
// splitting and the errors for what is not supported. Parity with Hugging Face tokenizers on real
// files is test_tokenizer_parity.py.
#include "tokenizer/tokenizer.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/utf8.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/regex.h"

namespace nss::tokenizer {
namespace {

TEST(ByteLevel, MatchesGpt2BytesToUnicode) {
  const auto& table = byte_to_char();
  EXPECT_EQ(table['A'], U'A');
  EXPECT_EQ(table['!'], U'!');
  EXPECT_EQ(table[0], 256u);
  EXPECT_EQ(table[' '], 0x120u);   // Ġ
  EXPECT_EQ(table['\n'], 0x10Au);  // Ċ
  EXPECT_EQ(table[127], 0x121u);
  EXPECT_EQ(table[173], 0x143u);  // the soft hyphen, the last byte GPT-2 remaps
  EXPECT_EQ(table[0xE9], 0xE9u);
  EXPECT_EQ(to_byte_level(" h\xC3\xA9"), "\xC4\xA0h\xC3\x83\xC2\xA9");  // "Ġh" + "Ã©"
}

TEST(ByteLevel, EveryByteRoundTrips) {
  std::string bytes;
  for (int b = 0; b < 256; ++b) bytes.push_back(static_cast<char>(b));
  std::string back;
  append_byte_level_bytes(to_byte_level(bytes), back);
  EXPECT_EQ(back, bytes);
}

TEST(ByteLevel, TokenOutsideTheAlphabetKeepsItsBytes) {
  std::string out;
  append_byte_level_bytes("a\xE4\xB8\xAD", out);  // "a中": 中 is no byte's code point
  EXPECT_EQ(out, "a\xE4\xB8\xAD");
}

TEST(Utf8, LossyReplacesMaximalSubparts) {
  EXPECT_EQ(utf8_lossy("ok \xC3\xA9"), "ok \xC3\xA9");
  EXPECT_EQ(utf8_lossy("a\xC3"), "a\xEF\xBF\xBD");
  EXPECT_EQ(utf8_lossy("\xE2\x82z"), "\xEF\xBF\xBDz");            // one for E2 82
  EXPECT_EQ(utf8_lossy("\xF0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // 80 cannot follow F0
  EXPECT_EQ(utf8_lossy("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate
  EXPECT_EQ(utf8_lossy("\xFF"), "\xEF\xBF\xBD");
}

TEST(Regex, WhitespaceIsOnigurumasWhiteSpace) {
  // U+180E is no White_Space (Oniguruma), though PCRE2's own \s takes it.
  const std::string text = "a\u180e b\\s";
  using Matches = std::vector<std::pair<size_t, size_t>>;
  EXPECT_EQ(Regex(R"(\s+)", "t").find_all(text), (Matches{{4, 5}}));
  EXPECT_EQ(Regex(R"([^\s]+)", "t").find_all(text), (Matches{{0, 4}, {5, 8}}));
  EXPECT_EQ(Regex(R"(\S+)", "t").find_all(text), (Matches{{0, 4}, {5, 8}}));
  EXPECT_EQ(Regex(R"(\\s)", "t").find_all(text), (Matches{{6, 8}}));  // a literal backslash
}

// A BPE over the letters a, b, c with the given merges, no pre-tokenizer.
Tokenizer letters(const std::string& merges, const std::string& extra = "") {
  return Tokenizer::from_json_text(R"({"model": {"type": "BPE", "vocab":
      {"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4, "abc": 5, "aa": 6}, "merges": )" +
                                       merges + "}" + extra + "}",
                                   "letters.json");
}

TEST(Bpe, LowestRankMergesFirst) {
  EXPECT_EQ(letters(R"(["b c", "a b", "ab c"])").encode("abc", false),
            (std::vector<int32_t>{0, 4}));
  EXPECT_EQ(letters(R"(["a b", "b c", "ab c"])").encode("abc", false), (std::vector<int32_t>{5}));
}

TEST(Bpe, PairMergesAndLeftmostAmongEqualRanks) {
  const auto tokenizer = letters(R"([["a", "a"]])");
  EXPECT_EQ(tokenizer.encode("aaa", false), (std::vector<int32_t>{6, 0}));
  EXPECT_EQ(tokenizer.decode({6, 0}, false), "aa a");  // no decoder: tokens joined by spaces
}

TEST(Bpe, InvalidUtf8IsEncodedAsReplacementCharacters) {
  const auto tokenizer = Tokenizer::from_json_text(
      R"({"model": {"type": "BPE", "vocab": {"a": 0, "\ufffd": 1}, "merges": []}})", "fffd.json");
  EXPECT_EQ(tokenizer.encode("a\xFF\xE2\x82"
                             "a",
                             false),
            (std::vector<int32_t>{0, 1, 1, 0}));
}

TEST(Bpe, CharactersWithoutAnIdAreDropped) {
  EXPECT_EQ(letters("[]").encode("axb", false), (std::vector<int32_t>{0, 1}));
}

TEST(AddedTokens, SplitFirstLongestMatchAndLstrip) {
  const auto tokenizer = letters("[]", R"(, "added_tokens": [
      {"id": 7, "content": "<s>", "special": true, "normalized": false},
      {"id": 8, "content": "<s>>", "special": false, "normalized": false},
      {"id": 9, "content": "<m>", "special": true, "lstrip": true, "normalized": false}])");
  EXPECT_EQ(tokenizer.encode("a<s>b<s>>c", false), (std::vector<int32_t>{0, 7, 1, 8, 2}));
  EXPECT_EQ(tokenizer.encode("a  <m>", false), (std::vector<int32_t>{0, 9}));
  EXPECT_EQ(tokenizer.decode({0, 7, 8}, true), "a <s>>");  // only 7 is special
  EXPECT_EQ(tokenizer.vocab_size(), 10);
  EXPECT_EQ(tokenizer.token_to_id("<m>"), 9);
  EXPECT_EQ(tokenizer.token_to_id("bc"), 4);
  EXPECT_FALSE(tokenizer.token_to_id("zz"));
}

void expect_data_error(const std::string& json, const std::string& needle) {
  try {
    Tokenizer::from_json_text(json, "model/tokenizer.json");
    FAIL() << "no error for " << json;
  } catch (const DataError& e) {
    EXPECT_NE(e.message().find("model/tokenizer.json"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find(needle), std::string::npos) << e.message();
  }
}

TEST(Errors, UnsupportedFeaturesAreDataErrors) {
  const std::string bpe = R"({"type": "BPE", "vocab": {"a": 0}, "merges": []})";
  expect_data_error(R"({"model": {"type": "Unigram", "vocab": []}})", "model type \"Unigram\"");
  expect_data_error(R"({"model": )" + bpe + R"(, "pre_tokenizer": {"type": "UnicodeScripts"}})",
                    "pre-tokenizer type \"UnicodeScripts\"");
  expect_data_error(R"({"model": )" + bpe +
                        R"(, "pre_tokenizer": {"type": "Metaspace", "prepend_scheme": "twice"}})",
                    "prepend_scheme \"twice\"");
  expect_data_error(R"({"model": )" + bpe +
                        R"(, "normalizer": {"type": "Precompiled", "precompiled_charsmap": ""}})",
                    "normalizer type \"Precompiled\"");
  expect_data_error(R"({"model": )" + bpe + R"(, "decoder": {"type": "CTC"}})",
                    "decoder type \"CTC\"");
  expect_data_error(
      R"({"model": )" + bpe +
          R"(, "decoder": {"type": "Strip", "content": "ab", "start": 1, "stop": 0}})",
      "is not one character");
  expect_data_error(
      R"({"model": )" + bpe +
          R"(, "decoder": {"type": "Strip", "content": " ", "start": -1, "stop": 0}})",
      "is not a count of characters");
  expect_data_error(
      R"({"model": )" + bpe + R"(, "normalizer": {"type": "Strip", "strip_left": "yes"}})",
      "not a valid tokenizer.json");
  expect_data_error(R"({"model": )" + bpe + R"(, "normalizer": {"prepend": "x"}})",
                    "not a valid tokenizer.json");
  expect_data_error(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [],
                     "continuing_subword_prefix": "##"}})",
                    "continuing_subword_prefix");
  expect_data_error(
      R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [], "dropout": 0.1}})", "dropout");
  expect_data_error(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a b"]}})",
                    "outside the vocabulary");
  expect_data_error(R"({"model": )" + bpe +
                        R"(, "pre_tokenizer": {"type": "Split", "pattern": {"Regex": "("},
                     "behavior": "Isolated"}})",
                    "cannot be compiled");
  expect_data_error("{not json", "not a valid tokenizer.json");
  EXPECT_THROW(Tokenizer::from_file("/nonexistent/tokenizer.json"), DataError);
}

// A SentencePiece-style file (Llama 2, Mistral, Gemma): spaces become ▁ in
// the normalizer, characters outside the vocabulary fall back to their
// bytes, and the decoder turns both back.
Tokenizer byte_fallback_tokenizer() {
  return Tokenizer::from_json_text(R"({
    "normalizer": {"type": "Sequence", "normalizers": [
      {"type": "Prepend", "prepend": "▁"}, {"type": "Replace", "pattern": {"String": " "},
                                             "content": "▁"}]},
    "model": {"type": "BPE", "byte_fallback": true, "fuse_unk": true, "unk_token": "<unk>",
              "vocab": {"<unk>": 0, "▁": 1, "a": 2, "▁a": 3, "<0xC3>": 4, "<0xA9>": 5,
                        "<0xE4>": 6},
              "merges": [["▁", "a"]]},
    "decoder": {"type": "Sequence", "decoders": [
      {"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "ByteFallback"},
      {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}})",
                                   "test");
}

TEST(ByteFallback, UnknownCharactersBecomeTheirBytesAndDecodeBack) {
  const Tokenizer tokenizer = byte_fallback_tokenizer();
  // "é" is C3 A9; "中" (E4 B8 AD) lacks two byte tokens: <unk>.
  EXPECT_EQ(tokenizer.encode("a é", false), (std::vector<int32_t>{3, 1, 4, 5}));
  EXPECT_EQ(tokenizer.encode("中中a", false), (std::vector<int32_t>{1, 0, 2}));
  EXPECT_EQ(tokenizer.decode({3, 1, 4, 5}, false), "a é");
  // A lone continuation byte is no text: one replacement character.
  EXPECT_EQ(tokenizer.decode({3, 5}, false), "a\xEF\xBF\xBD");
}

TEST(Normalizer, UnicodeFormsAndCaseMappingComeFromIcu) {
  const Tokenizer nfkc = Tokenizer::from_json_text(R"({
    "normalizer": {"type": "Sequence", "normalizers": [{"type": "NFKC"}, {"type": "Lowercase"}]},
    "model": {"type": "BPE", "vocab": {"ﬁ": 0, "fi": 1, "f": 2, "i": 3, "σ": 4, "ς": 5, "̇": 6},
              "merges": [["f", "i"]]}})",
                                                   "test");
  EXPECT_EQ(nfkc.encode("ﬁ", false), (std::vector<int32_t>{1}));  // NFKC: ﬁ is f i
  EXPECT_EQ(nfkc.encode("FI", false), (std::vector<int32_t>{1}));
  EXPECT_EQ(nfkc.encode("Σ", false), (std::vector<int32_t>{4}));     // no final sigma: char by char
  EXPECT_EQ(nfkc.encode("İ", false), (std::vector<int32_t>{3, 6}));  // i + U+0307
}

// A BERT-style file: BertNormalizer (lowercasing), BertPreTokenizer, a
// WordPiece model with words of at most 6 characters, [CLS] $A [SEP].
Tokenizer wordpiece(const std::string& decoder) {
  return Tokenizer::from_json_text(R"({
    "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,
                   "strip_accents": null, "lowercase": true},
    "pre_tokenizer": {"type": "BertPreTokenizer"},
    "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
              "max_input_chars_per_word": 6,
              "vocab": {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "un": 3, "una": 4, "##a": 5,
                        "##ble": 6, "##b": 7, "able": 8, ".": 9, "'": 10, "m": 11, "中": 12,
                        "cafe": 13}},
    "post_processor": {"type": "BertProcessing", "sep": ["[SEP]", 2], "cls": ["[CLS]", 1]},
    "decoder": )" + decoder + "}",
                                   "bert.json");
}

TEST(WordPiece, GreedyLongestMatchFromTheStart) {
  const auto tokenizer = wordpiece("null");
  // "una" is taken first though "un" + "##able" would cover the word too.
  EXPECT_EQ(tokenizer.encode("unable", false), (std::vector<int32_t>{4, 6}));
  EXPECT_EQ(tokenizer.encode("unaab", false), (std::vector<int32_t>{4, 5, 7}));
  EXPECT_EQ(tokenizer.encode("unable", true), (std::vector<int32_t>{1, 4, 6, 2}));
  EXPECT_EQ(tokenizer.token_to_id("##ble"), 6);
  EXPECT_EQ(tokenizer.vocab_size(), 14);
}

TEST(WordPiece, UnmatchedOrLongWordIsOneUnk) {
  const auto tokenizer = wordpiece("null");
  EXPECT_EQ(tokenizer.encode("unx able", false), (std::vector<int32_t>{0, 8}));
  EXPECT_EQ(tokenizer.encode("ablable", false), (std::vector<int32_t>{0}));  // 7 characters
  EXPECT_EQ(tokenizer.encode("unabab", false), (std::vector<int32_t>{4, 7, 5, 7}));
}

TEST(WordPiece, MissingUnkFailsOnlyWhenAWordNeedsIt) {
  const auto tokenizer = Tokenizer::from_json_text(
      R"({"model": {"type": "WordPiece", "vocab": {"a": 0, "##b": 1}}})", "no-unk.json");
  EXPECT_EQ(tokenizer.encode("ab", false), (std::vector<int32_t>{0, 1}));
  EXPECT_THROW(tokenizer.encode("ba", false), DataError);
}

TEST(WordPiece, BertNormalizerAndPreTokenizer) {
  const auto tokenizer = wordpiece("null");
  // Lower case, accents stripped, control characters gone, tab a space,
  // CJK and punctuation on their own.
  const std::string text = "CAF\u00c9\x01\tun\u4e2da.";
  EXPECT_EQ(tokenizer.encode(text, false), (std::vector<int32_t>{13, 3, 12, 0, 9}));
}

TEST(WordPiece, DecoderGluesPiecesAndCleansUp) {
  const std::vector<int32_t> ids = {1, 4, 6, 9, 10, 11, 2};
  const auto cleaned = wordpiece(R"({"type": "WordPiece", "prefix": "##", "cleanup": true})");
  // Cleanup runs on each token after its space: only " ." joins here.
  EXPECT_EQ(cleaned.decode(ids, false), "[CLS] unable. ' m [SEP]");
  EXPECT_EQ(cleaned.decode({5, 8}, false), "##a able");  // the first token keeps its prefix
  const auto raw = wordpiece(R"({"type": "WordPiece", "prefix": "##", "cleanup": false})");
  EXPECT_EQ(raw.decode(ids, false), "[CLS] unable . ' m [SEP]");
}

}  // namespace
}  // namespace nss::tokenizer

// The words of a text as BERT's tokenizer pipeline cuts it — BertNormalizer
// (control characters dropped, CJK ideographs standing alone when it
// handles Chinese characters) then BertPreTokenizer (whitespace separates,
// each punctuation character is a word) — with their byte offsets in the
// original text, so a tag given to a word marks the bytes it came from.
// Encoding each word alone gives the ids the whole text would: every rule
// that cuts is applied here, and the normalizer changes no boundary.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace nss::ner {

struct Word {
  std::size_t begin = 0, end = 0;  // byte offsets; a word may hold dropped characters
};

/// The words of `text` (any bytes: an invalid sequence is a dropped
/// character, as U+FFFD is). `cjk_alone`: BertNormalizer's
/// handle_chinese_chars.
std::vector<Word> bert_words(std::string_view text, bool cjk_alone);

}  // namespace nss::ner

#include "ner/bert_words.h"

#include "core/utf8.h"
#include "tokenizer/bert_characters.h"
#include "tokenizer/whitespace.h"

namespace nss::ner {
namespace {

enum class Kind { kDropped, kSpace, kAlone, kWordPart };

// The classes are the tokenizer's own (tokenizers' Unicode 8.0 tables).
Kind kind_of(char32_t c, bool cjk_alone) {
  if (c == 0 || c == 0xFFFD || tokenizer::is_bert_control(c)) return Kind::kDropped;
  if (tokenizer::is_whitespace(c)) return Kind::kSpace;
  if (tokenizer::is_bert_punctuation(c) || (cjk_alone && tokenizer::is_chinese_char(c)))
    return Kind::kAlone;
  return Kind::kWordPart;
}

}  // namespace

std::vector<Word> bert_words(std::string_view text, bool cjk_alone) {
  std::vector<Word> words;
  bool open = false;  // the last word grows with the next word part
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t length = utf8_character_length(text, pos);
    Kind kind = Kind::kDropped;
    if (length) {
      std::size_t at = pos;
      kind = kind_of(next_code_point(text, at), cjk_alone);
    }
    const std::size_t end = pos + (length ? length : 1);
    switch (kind) {
      case Kind::kDropped:  // a word continuing after it covers it
        break;
      case Kind::kSpace:
        open = false;
        break;
      case Kind::kAlone:
        words.push_back({pos, end});
        open = false;
        break;
      case Kind::kWordPart:
        if (open)
          words.back().end = end;
        else
          words.push_back({pos, end});
        open = true;
        break;
    }
    pos = end;
  }
  return words;
}

}  // namespace nss::ner

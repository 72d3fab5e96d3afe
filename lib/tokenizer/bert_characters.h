// The character classes of BERT's normalizer and pre-tokenizer as Hugging
// Face `tokenizers` has them: its unicode_categories crate carries the
// tables of Unicode 8.0, so code points assigned or recategorised since are
// classed as they were then (tests/tokenizer compares every code point).
#pragma once

namespace nss::tokenizer {

/// Other (Cc, Cf, Co), but not tab, newline or carriage return: what
/// BertNormalizer's clean_text removes, with NUL and U+FFFD.
bool is_bert_control(char32_t cp);

/// CJK ideographs (the blocks tokenizers lists): BertNormalizer's
/// handle_chinese_chars puts a space on either side.
bool is_chinese_char(char32_t cp);

/// Nonspacing marks (Mn), which BertNormalizer's strip_accents drops after NFD.
bool is_bert_nonspacing_mark(char32_t cp);

/// ASCII punctuation or a Unicode P category: what BertPreTokenizer and
/// Punctuation isolate.
bool is_bert_punctuation(char32_t cp);

}  // namespace nss::tokenizer

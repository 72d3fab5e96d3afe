#include "tokenizer/bert_characters.h"

#include <string>
#include <unicode/uniset.h>
#include <unicode/unistr.h>

#include "core/error.h"

namespace nss::tokenizer {
namespace {

// Sets of Unicode 8.0's code points by today's categories, with the few
// code points whose category changed since put back as 8.0 had them.
constexpr const char* kControl = "[[[:Cc:][:Cf:][:Co:]]&[:age=8.0:]]";
// U+1734 was Mn (now Mc); U+1885/U+1886 (then Mo), U+A9BD (then Mc) and
// U+111C9 (then Po) are Mn now.
constexpr const char* kNonspacingMark =
    "[[[[:Mn:]&[:age=8.0:]][\\u1734]]-[\\u1885\\u1886\\uA9BD\\U000111C9]]";
// U+166D (now So) and U+111C9 (now Mn) were Po.
constexpr const char* kPunctuation = "[[[:P:]&[:age=8.0:]][\\u166D\\U000111C9]]";

const icu::UnicodeSet* frozen_set(const char* pattern) {
  UErrorCode status = U_ZERO_ERROR;
  auto* set = new icu::UnicodeSet(icu::UnicodeString(pattern, -1, US_INV), status);
  if (U_FAILURE(status))
    throw InternalError("tokenizer",
                        std::string("ICU cannot build ") + pattern + ": " + u_errorName(status));
  set->freeze();
  return set;
}

bool contains(const icu::UnicodeSet& set, char32_t cp) {
  return set.contains(static_cast<UChar32>(cp));
}

}  // namespace

bool is_bert_control(char32_t cp) {
  if (cp == '\t' || cp == '\n' || cp == '\r') return false;
  static const icu::UnicodeSet* set = frozen_set(kControl);
  return contains(*set, cp);
}

bool is_chinese_char(char32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

bool is_bert_nonspacing_mark(char32_t cp) {
  if (cp < 0x300) return false;
  static const icu::UnicodeSet* set = frozen_set(kNonspacingMark);
  return contains(*set, cp);
}

bool is_bert_punctuation(char32_t cp) {
  if (cp < 0x80)
    return (cp >= '!' && cp <= '/') || (cp >= ':' && cp <= '@') || (cp >= '[' && cp <= '`') ||
           (cp >= '{' && cp <= '~');
  static const icu::UnicodeSet* set = frozen_set(kPunctuation);
  return contains(*set, cp);
}

}  // namespace nss::tokenizer

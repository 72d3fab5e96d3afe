#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenizer/regex.h"

#include <pcre2.h>

#include "core/error.h"

namespace nss::tokenizer {
namespace {

// `tokenizers` matches with Oniguruma, whose \s is the Unicode White_Space
// property; PCRE2's \s (with PCRE2_UCP) also takes U+180E MONGOLIAN VOWEL
// SEPARATOR, a format character since Unicode 6.3. Spelling \s and \S as the
// property, which works inside character classes too, gives Oniguruma's
// pieces: "x\u180e's" is "x", "\u180e'", "s" under GPT-2's pattern, not "x",
// "\u180e", "'s".
std::string with_white_space_property(const std::string& pattern) {
  std::string out;
  out.reserve(pattern.size() + 32);
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '\\' || i + 1 == pattern.size()) {
      out.push_back(pattern[i]);
      continue;
    }
    const char escaped = pattern[++i];
    if (escaped == 's') {
      out.append("\\p{White_Space}");
    } else if (escaped == 'S') {
      out.append("\\P{White_Space}");
    } else {
      out.push_back('\\');
      out.push_back(escaped);  // including "\\": an escaped backslash is no \s
    }
  }
  return out;
}

}  // namespace

struct Regex::Code {
  pcre2_code* code = nullptr;
  bool jit = false;
  std::string pattern, origin;  // for errors
  ~Code() { pcre2_code_free(code); }
};

Regex::Regex(const std::string& pattern, const std::string& origin) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  auto code = std::make_shared<Code>();
  const std::string translated = with_white_space_property(pattern);
  code->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()), translated.size(),
                             PCRE2_UTF | PCRE2_UCP, &error, &offset, nullptr);
  if (code->code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error, message, sizeof message);
    throw DataError("tokenizer",
                    origin + ": regular expression " + pattern +
                        " cannot be compiled: " + reinterpret_cast<const char*>(message),
                    "only patterns PCRE2 understands are supported (Oniguruma extensions are not)");
  }
  // Without JIT (a PCRE2 built without it) the interpreter gives the same
  // matches, only slower.
  code->jit = pcre2_jit_compile(code->code, PCRE2_JIT_COMPLETE) == 0;
  code->pattern = pattern;
  code->origin = origin;
  code_ = std::move(code);
}

std::vector<std::pair<size_t, size_t>> Regex::find_all(std::string_view text) const {
  std::vector<std::pair<size_t, size_t>> matches;
  std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> data(
      pcre2_match_data_create_from_pattern(code_->code, nullptr), &pcre2_match_data_free);
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t start = 0;
  while (start <= text.size()) {
    // The text was validated (utf8_lossy) before it got here.
    const int rc = code_->jit ? pcre2_jit_match(code_->code, subject, text.size(), start,
                                                PCRE2_NO_UTF_CHECK, data.get(), nullptr)
                              : pcre2_match(code_->code, subject, text.size(), start,
                                            PCRE2_NO_UTF_CHECK, data.get(), nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT ||
        rc == PCRE2_ERROR_JIT_STACKLIMIT) {
      // Backtracking over a run of millions of characters (20 M spaces under
      // Llama 3's pattern); tokenizers fails on such text too (Oniguruma's
      // retry limit).
      throw DataError("tokenizer",
                      code_->origin + ": a text of " + std::to_string(text.size()) +
                          " bytes exceeds PCRE2's match limit under pre-tokenizer pattern " +
                          code_->pattern,
                      "split the document; Hugging Face tokenizers fails on it as well");
    }
    if (rc < 0) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(rc, message, sizeof message);
      throw InternalError("tokenizer", std::string("PCRE2 match failed: ") +
                                           reinterpret_cast<const char*>(message));
    }
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(data.get());
    matches.emplace_back(ovector[0], ovector[1]);
    if (ovector[1] > ovector[0]) {
      start = ovector[1];
    } else {
      if (ovector[1] >= text.size()) break;
      start = ovector[1] + 1;
      while (start < text.size() && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) {
        ++start;
      }
    }
  }
  return matches;
}

}  // namespace nss::tokenizer

#define PCRE2_CODE_UNIT_WIDTH 8
#include "pii/pattern.h"

#include <cstdint>
#include <new>
#include <pcre2.h>

#include "core/error.h"

namespace nss::pii {
namespace {

constexpr std::uint32_t kMatchLimit = 10'000'000;

std::string pcre2_message(int code) {
  PCRE2_UCHAR message[256];
  pcre2_get_error_message(code, message, sizeof message);
  return reinterpret_cast<const char*>(message);
}

// One match block per thread, grown to the most groups any pattern asked
// for: after the first calls, matching allocates nothing.
pcre2_match_data* thread_match_data(std::uint32_t pairs) {
  struct Block {
    pcre2_match_data* data = nullptr;
    std::uint32_t pairs = 0;
    ~Block() { pcre2_match_data_free(data); }
  };
  thread_local Block block;
  if (block.pairs < pairs) {
    pcre2_match_data_free(block.data);
    block.data = pcre2_match_data_create(pairs, nullptr);
    block.pairs = block.data != nullptr ? pairs : 0;
    if (block.data == nullptr) throw std::bad_alloc();
  }
  return block.data;
}

}  // namespace

struct Pattern::Code {
  pcre2_code* code = nullptr;
  pcre2_match_context* context = nullptr;
  std::uint32_t groups = 0;
  std::string name;
  ~Code() {
    pcre2_match_context_free(context);
    pcre2_code_free(code);
  }

  // pcre2_match from `start` with `options`: true on a match, false on none.
  bool match(std::string_view text, std::size_t start, std::uint32_t options,
             pcre2_match_data* data) const {
    const int rc = pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), start,
                               options, data, context);
    if (rc == PCRE2_ERROR_NOMATCH) return false;
    if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT ||
        rc == PCRE2_ERROR_HEAPLIMIT || rc == PCRE2_ERROR_JIT_STACKLIMIT) {
      throw DataError("pii",
                      "a text of " + std::to_string(text.size()) +
                          " bytes exceeds PCRE2's match limit under PII pattern " + name,
                      "shorten such cells, or leave their column out of PII detection");
    }
    if (rc < 0) {
      throw InternalError(
          "pii", "PCRE2 match failed under PII pattern " + name + ": " + pcre2_message(rc));
    }
    return true;
  }
};

Pattern::Pattern(std::string_view regex, unsigned flags, std::string name) {
  auto code = std::make_shared<Code>();
  code->name = std::move(name);
  // An invalid UTF-8 sequence is a barrier no match crosses. PCRE2 would
  // try a pattern that starts with .* only at the text's start; the text
  // after a barrier needs its own tries.
  std::uint32_t options = PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF | PCRE2_NO_DOTSTAR_ANCHOR;
  if (flags & kCaseless) options |= PCRE2_CASELESS;
  if (flags & kDotAll) options |= PCRE2_DOTALL;
  if (flags & kMultiline) options |= PCRE2_MULTILINE;
  int error = 0;
  PCRE2_SIZE offset = 0;
  code->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(regex.data()), regex.size(), options,
                             &error, &offset, nullptr);
  if (code->code == nullptr) {
    throw InternalError("pii", "PII pattern " + code->name +
                                   " does not compile: " + pcre2_message(error) + " at offset " +
                                   std::to_string(offset) + " of " + std::string(regex));
  }
  // Without JIT (a PCRE2 built without it) the interpreter gives the same
  // matches, only slower.
  pcre2_jit_compile(code->code, PCRE2_JIT_COMPLETE);
  pcre2_pattern_info(code->code, PCRE2_INFO_CAPTURECOUNT, &code->groups);
  code->context = pcre2_match_context_create(nullptr);
  if (code->context == nullptr) throw std::bad_alloc();
  pcre2_set_match_limit(code->context, kMatchLimit);
  code_ = std::move(code);
}

std::vector<Match> Pattern::find_all(std::string_view text) const {
  pcre2_match_data* data = thread_match_data(code_->groups + 1);
  const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(data);
  std::vector<Match> matches;
  std::size_t start = 0;
  // PCRE2_NOTEMPTY: an empty match is no match, so every match ends past
  // where it started and the next search starts there.
  while (start <= text.size() && code_->match(text, start, PCRE2_NOTEMPTY, data)) {
    Match match;
    match.begin = ovector[0];
    match.end = ovector[1];
    for (std::uint32_t g = 1; g <= code_->groups; ++g) {
      const bool set = ovector[2 * g] != PCRE2_UNSET;
      match.groups.emplace_back(set ? static_cast<std::ptrdiff_t>(ovector[2 * g]) : -1,
                                set ? static_cast<std::ptrdiff_t>(ovector[2 * g + 1]) : -1);
    }
    start = match.end;
    matches.push_back(std::move(match));
  }
  return matches;
}

bool Pattern::full_match(std::string_view text) const {
  // PCRE2 runs match-time anchoring in its interpreter, not the JIT code.
  // Its end anchor holds at a barrier too, so the end is checked here.
  pcre2_match_data* data = thread_match_data(code_->groups + 1);
  return code_->match(text, 0, PCRE2_ANCHORED | PCRE2_ENDANCHORED, data) &&
         pcre2_get_ovector_pointer(data)[1] == text.size();
}

}  // namespace nss::pii

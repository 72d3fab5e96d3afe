#include "tokenizer/normalizer.h"

#include <map>
#include <memory>
#include <mutex>
#include <unicode/locid.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/uniset.h>
#include <unicode/unistr.h>

#include "core/error.h"
#include "core/utf8.h"
#include "tokenizer/bert_characters.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/whitespace.h"

namespace nss::tokenizer {
namespace {

// tokenizers normalises with the tables of Unicode 9.0 (the
// unicode-normalization-alignments crate): code points assigned later pass
// through unchanged, as ICU's filtered normaliser leaves what is outside
// its set (tests/tokenizer compares every code point).
constexpr const char* kTokenizersUnicode = "[:age=9.0:]";

const icu::UnicodeSet& tokenizers_repertoire() {
  static const icu::UnicodeSet* set = [] {
    UErrorCode status = U_ZERO_ERROR;
    auto* made = new icu::UnicodeSet(icu::UnicodeString(kTokenizersUnicode, -1, US_INV), status);
    if (U_FAILURE(status))
      throw InternalError("tokenizer", std::string("ICU cannot build ") + kTokenizersUnicode +
                                           ": " + u_errorName(status));
    made->freeze();
    return made;
  }();
  return *set;
}

const icu::Normalizer2& unicode_form(const std::string& type) {
  static std::map<std::string, std::unique_ptr<icu::FilteredNormalizer2>> forms;
  static std::mutex mutex;
  const std::lock_guard<std::mutex> lock(mutex);
  auto& form = forms[type];
  if (form) return *form;
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* full = type == "NFC"    ? icu::Normalizer2::getNFCInstance(status)
                                 : type == "NFD"  ? icu::Normalizer2::getNFDInstance(status)
                                 : type == "NFKC" ? icu::Normalizer2::getNFKCInstance(status)
                                                  : icu::Normalizer2::getNFKDInstance(status);
  if (U_FAILURE(status) || full == nullptr)
    throw InternalError("tokenizer", "ICU has no " + type + " normaliser: " + u_errorName(status));
  form = std::make_unique<icu::FilteredNormalizer2>(*full, tokenizers_repertoire());
  return *form;
}

std::string normalize_form(const std::string& type, const std::string& text) {
  bool ascii = true;
  for (const char c : text) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
  if (ascii) return text;  // every form leaves ASCII as it is
  const icu::Normalizer2& form = unicode_form(type);
  UErrorCode status = U_ZERO_ERROR;
  const icu::UnicodeString normalized = form.normalize(
      icu::UnicodeString::fromUTF8(icu::StringPiece(text.data(), text.size())), status);
  if (U_FAILURE(status))
    throw InternalError("tokenizer", type + " normalisation failed: " + u_errorName(status));
  std::string out;
  normalized.toUTF8String(out);
  return out;
}

// Rust's char::to_lowercase, code point by code point: the full mapping
// without context (a lone capital sigma is σ, İ is i + U+0307).
std::string lowercase(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const char32_t cp = next_code_point(text, pos);
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp >= 'A' && cp <= 'Z' ? cp + 32 : cp));
      continue;
    }
    icu::UnicodeString one(static_cast<UChar32>(cp));
    one.toLower(icu::Locale::getRoot());
    one.toUTF8String(out);
  }
  return out;
}

// General category Mark (Mn, Mc, Me) as Unicode 9.0 assigned it: what
// StripAccents removes. Since 9.0, U+111C9 became a mark and U+1CF2/U+1CF3
// stopped being marks.
bool is_unicode9_mark(char32_t cp) {
  if (cp == 0x1CF2 || cp == 0x1CF3) return true;
  if (cp == 0x111C9 || !tokenizers_repertoire().contains(static_cast<UChar32>(cp))) return false;
  const int8_t type = u_charType(static_cast<UChar32>(cp));
  return type == U_NON_SPACING_MARK || type == U_COMBINING_SPACING_MARK || type == U_ENCLOSING_MARK;
}

std::string strip_accents(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const size_t start = pos;
    if (!is_unicode9_mark(next_code_point(text, pos))) out.append(text, start, pos - start);
  }
  return out;
}

std::string strip(const std::string& text, bool left, bool right) {
  size_t begin = 0, end = text.size();
  if (left) {
    for (size_t pos = 0; pos < text.size();) {
      if (!is_whitespace(next_code_point(text, pos))) break;
      begin = pos;
    }
  }
  if (right) {
    end = begin;
    for (size_t pos = begin; pos < text.size();)
      if (!is_whitespace(next_code_point(text, pos))) end = pos;
  }
  return text.substr(begin, end - begin);
}

// BertNormalizer's clean_text: NUL, U+FFFD and control characters go, any
// whitespace (tab, newline and carriage return too) becomes a space.
std::string bert_clean(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const size_t start = pos;
    const char32_t cp = next_code_point(text, pos);
    if (cp == 0 || cp == 0xFFFD || is_bert_control(cp)) continue;
    if (is_whitespace(cp))
      out.push_back(' ');
    else
      out.append(text, start, pos - start);
  }
  return out;
}

std::string bert_chinese(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const size_t start = pos;
    const bool chinese = is_chinese_char(next_code_point(text, pos));
    if (chinese) out.push_back(' ');
    out.append(text, start, pos - start);
    if (chinese) out.push_back(' ');
  }
  return out;
}

// BertNormalizer's strip_accents: NFD, then nonspacing marks go.
std::string bert_strip_accents(const std::string& text) {
  const std::string decomposed = normalize_form("NFD", text);
  std::string out;
  out.reserve(decomposed.size());
  for (size_t pos = 0; pos < decomposed.size();) {
    const size_t start = pos;
    if (!is_bert_nonspacing_mark(next_code_point(decomposed, pos)))
      out.append(decomposed, start, pos - start);
  }
  return out;
}

}  // namespace

Normalizer Normalizer::from_json(const nlohmann::json& spec, const std::string& origin) {
  Normalizer result;
  if (!spec.is_null()) result.add(spec, origin);
  return result;
}

void Normalizer::add(const nlohmann::json& spec, const std::string& origin) {
  const std::string type = spec.at("type").get<std::string>();
  Step step{Step::Kind::kNfc, false, false, {}, {}};
  if (type == "Sequence") {
    for (const auto& inner : spec.at("normalizers")) add(inner, origin);
    return;
  } else if (type == "NFC" || type == "NFD" || type == "NFKC" || type == "NFKD") {
    step.kind = type == "NFC"    ? Step::Kind::kNfc
                : type == "NFD"  ? Step::Kind::kNfd
                : type == "NFKC" ? Step::Kind::kNfkc
                                 : Step::Kind::kNfkd;
    unicode_form(type);  // fails here, not on the first text
  } else if (type == "Lowercase") {
    step.kind = Step::Kind::kLowercase;
  } else if (type == "Strip") {
    step.kind = Step::Kind::kStrip;
    step.left = spec.value("strip_left", spec.value("left", true));
    step.right = spec.value("strip_right", spec.value("right", true));
  } else if (type == "StripAccents") {
    step.kind = Step::Kind::kStripAccents;
  } else if (type == "Prepend") {
    step.kind = Step::Kind::kPrepend;
    step.text = spec.at("prepend").get<std::string>();
  } else if (type == "Replace") {
    step.kind = Step::Kind::kReplace;
    step.text = spec.at("content").get<std::string>();
    step.pattern = Pattern::from_json(spec.at("pattern"), "Replace pattern", origin);
  } else if (type == "ByteLevel") {
    step.kind = Step::Kind::kByteLevel;
  } else if (type == "BertNormalizer") {
    add_bert(spec);
    return;
  } else {
    throw DataError("tokenizer", origin + ": normalizer type \"" + type + "\" is not supported",
                    "supported: Sequence, NFC, NFD, NFKC, NFKD, Lowercase, Strip, StripAccents, "
                    "Prepend, Replace, ByteLevel, BertNormalizer; prepare the data with "
                    "scripts/prepare_data_hf.py instead");
  }
  steps_.push_back(std::move(step));
}

// BertNormalizer as the steps it runs in order; strip_accents null follows
// lowercase.
void Normalizer::add_bert(const nlohmann::json& spec) {
  const auto flag = [&spec](const char* key, bool fallback) {
    const auto value = spec.value(key, nlohmann::json());
    return value.is_null() ? fallback : value.get<bool>();
  };
  const bool lowercase = flag("lowercase", true);
  const Step::Kind kinds[] = {Step::Kind::kBertClean, Step::Kind::kBertChinese,
                              Step::Kind::kBertStripAccents, Step::Kind::kLowercase};
  const bool wanted[] = {flag("clean_text", true), flag("handle_chinese_chars", true),
                         flag("strip_accents", lowercase), lowercase};
  for (size_t i = 0; i < 4; ++i)
    if (wanted[i]) steps_.push_back(Step{kinds[i], false, false, {}, {}});
  if (wanted[2]) unicode_form("NFD");  // fails here, not on the first text
}

std::string Normalizer::apply(const Step& step, std::string text) {
  switch (step.kind) {
    case Step::Kind::kNfc:
      return normalize_form("NFC", text);
    case Step::Kind::kNfd:
      return normalize_form("NFD", text);
    case Step::Kind::kNfkc:
      return normalize_form("NFKC", text);
    case Step::Kind::kNfkd:
      return normalize_form("NFKD", text);
    case Step::Kind::kLowercase:
      return lowercase(text);
    case Step::Kind::kStrip:
      return strip(text, step.left, step.right);
    case Step::Kind::kStripAccents:
      return strip_accents(text);
    case Step::Kind::kPrepend:
      return text.empty() ? text : step.text + text;
    case Step::Kind::kReplace:
      return step.pattern.replace(text, step.text);
    case Step::Kind::kByteLevel:
      return to_byte_level(text);
    case Step::Kind::kBertClean:
      return bert_clean(text);
    case Step::Kind::kBertChinese:
      return bert_chinese(text);
    case Step::Kind::kBertStripAccents:
      return bert_strip_accents(text);
  }
  return text;
}

std::string Normalizer::apply(std::string text) const {
  for (const auto& step : steps_) text = apply(step, std::move(text));
  return text;
}

}  // namespace nss::tokenizer

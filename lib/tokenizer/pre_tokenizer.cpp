#include "tokenizer/pre_tokenizer.h"

#include <utility>

#include "core/error.h"
#include "tokenizer/bert_characters.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/regex.h"
#include "tokenizer/whitespace.h"

namespace nss::tokenizer {
namespace {

// GPT-2's pattern, which ByteLevel(use_regex=true) splits with.
constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// Digits: Rust's char::is_numeric is the N category, one code point a match.
constexpr const char* kNumericPattern = R"(\p{N})";

// Whitespace: tokenizers' \w+|[^\w\s]+ with Oniguruma's Unicode \w (UTS #18's
// word characters: alphabetic, marks, decimal digits, connector punctuation,
// joiners), kept; the rest removed.
constexpr const char* kWordsPattern =
    R"([\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}]+|)"
    R"([^\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}\p{White_Space}]+)";

// WhitespaceSplit: Rust's char::is_whitespace, one code point a match.
constexpr const char* kWhiteSpacePattern = R"(\p{White_Space})";

struct Segment {
  size_t begin, end;
  bool is_match;
};

// The text cut at the matches: alternating unmatched and matched segments
// that cover it (tokenizers' Pattern::find_matches).
std::vector<Segment> segments(const std::string& text,
                              const std::vector<std::pair<size_t, size_t>>& matches) {
  std::vector<Segment> out;
  size_t previous = 0;
  for (const auto& [begin, end] : matches) {
    if (previous != begin) out.push_back({previous, begin, false});
    out.push_back({begin, end, true});
    previous = end;
  }
  if (previous != text.size()) out.push_back({previous, text.size(), false});
  return out;
}

// Joins segments the way NormalizedString::split does for each behavior; the
// flag of a result says whether it is removed.
std::vector<Segment> apply_behavior(std::vector<Segment> parts, SplitBehavior behavior) {
  std::vector<Segment> out;
  bool previous_match = false;
  switch (behavior) {
    case SplitBehavior::kIsolated:
      for (auto& part : parts) out.push_back({part.begin, part.end, false});
      return out;
    case SplitBehavior::kRemoved:
      return parts;
    case SplitBehavior::kMergedWithPrevious:
      for (const auto& part : parts) {
        if (part.is_match && !previous_match && !out.empty()) {
          out.back().end = part.end;
        } else {
          out.push_back({part.begin, part.end, false});
        }
        previous_match = part.is_match;
      }
      return out;
    case SplitBehavior::kMergedWithNext:
      for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
        if (it->is_match && !previous_match && !out.empty()) {
          out.back().begin = it->begin;
        } else {
          out.push_back({it->begin, it->end, false});
        }
        previous_match = it->is_match;
      }
      return {out.rbegin(), out.rend()};
    case SplitBehavior::kContiguous:
      for (const auto& part : parts) {
        if (part.is_match == previous_match && !out.empty()) {
          out.back().end = part.end;
        } else {
          out.push_back({part.begin, part.end, false});
        }
        previous_match = part.is_match;
      }
      return out;
  }
  return out;
}

SplitBehavior parse_behavior(const std::string& name, const std::string& origin) {
  if (name == "Removed") return SplitBehavior::kRemoved;
  if (name == "Isolated") return SplitBehavior::kIsolated;
  if (name == "MergedWithPrevious") return SplitBehavior::kMergedWithPrevious;
  if (name == "MergedWithNext") return SplitBehavior::kMergedWithNext;
  if (name == "Contiguous") return SplitBehavior::kContiguous;
  throw DataError("tokenizer", origin + ": Split behavior \"" + name + "\" is not supported",
                  "expected Removed, Isolated, MergedWithPrevious, MergedWithNext or Contiguous");
}

// Metaspace: spaces become the replacement, which is prepended by the
// scheme, then (split) each replacement starts a piece.
void metaspace(const std::string& replacement, bool prepend, bool split, std::string& text,
               bool at_start, std::vector<std::pair<std::string, bool>>& out) {
  std::string replaced;
  replaced.reserve(text.size() + replacement.size());
  for (const char c : text) {
    if (c == ' ')
      replaced.append(replacement);
    else
      replaced.push_back(c);
  }
  // Whether it already starts with the replacement is asked after the spaces became it.
  if (prepend && replaced.compare(0, replacement.size(), replacement) != 0)
    replaced.insert(0, replacement);
  if (!split) {
    out.emplace_back(std::move(replaced), at_start);
    return;
  }
  auto parts = apply_behavior(segments(replaced, Pattern::literal(replacement).find_all(replaced)),
                              SplitBehavior::kMergedWithNext);
  for (const auto& part : parts)
    if (part.end > part.begin)
      out.emplace_back(replaced.substr(part.begin, part.end - part.begin),
                       at_start && part.begin == 0);
}

Pattern regex_pattern(const char* expression, const std::string& origin) {
  return Pattern::regex(std::make_shared<Regex>(expression, origin));
}

}  // namespace

PreTokenizer PreTokenizer::from_json(const nlohmann::json& spec, const std::string& origin) {
  PreTokenizer result;
  if (!spec.is_null()) result.add(spec, origin);
  return result;
}

void PreTokenizer::add_split(Pattern pattern, SplitBehavior behavior, bool invert) {
  Step step{Step::Kind::kSplit, std::move(pattern), {}, behavior, invert};
  steps_.push_back(std::move(step));
}

void PreTokenizer::add_metaspace(const nlohmann::json& spec, const std::string& origin) {
  Step step{Step::Kind::kMetaspace, {}, spec.value("replacement", std::string("\u2581"))};
  if (step.literal.empty())
    throw DataError("tokenizer", origin + ": Metaspace has an empty replacement");
  // Files older than prepend_scheme say add_prefix_space instead.
  const std::string scheme = spec.value(
      "prepend_scheme", std::string(spec.value("add_prefix_space", true) ? "always" : "never"));
  if (scheme == "always")
    step.prepend = Prepend::kAlways;
  else if (scheme == "first")
    step.prepend = Prepend::kFirst;
  else if (scheme == "never")
    step.prepend = Prepend::kNever;
  else
    throw DataError("tokenizer",
                    origin + ": Metaspace prepend_scheme \"" + scheme + "\" is not supported",
                    "expected always, first or never");
  step.split = spec.value("split", true);
  steps_.push_back(std::move(step));
}

void PreTokenizer::add(const nlohmann::json& spec, const std::string& origin) {
  const std::string type = spec.at("type").get<std::string>();
  if (type == "Sequence") {
    for (const auto& inner : spec.at("pretokenizers")) add(inner, origin);
  } else if (type == "Split") {
    add_split(Pattern::from_json(spec.at("pattern"), "Split pattern", origin),
              parse_behavior(spec.at("behavior").get<std::string>(), origin),
              spec.value("invert", false));
  } else if (type == "Digits") {
    const bool individual = spec.value("individual_digits", false);
    add_split(regex_pattern(kNumericPattern, origin),
              individual ? SplitBehavior::kIsolated : SplitBehavior::kContiguous, false);
  } else if (type == "Punctuation") {
    // tokenizers' punctuation class (Unicode 8.0's), not PCRE2's \p{P}.
    add_split(Pattern::characters(is_bert_punctuation),
              parse_behavior(spec.value("behavior", std::string("Isolated")), origin), false);
  } else if (type == "BertPreTokenizer") {
    add_split(Pattern::characters(is_whitespace), SplitBehavior::kRemoved, false);
    add_split(Pattern::characters(is_bert_punctuation), SplitBehavior::kIsolated, false);
  } else if (type == "Whitespace") {
    add_split(regex_pattern(kWordsPattern, origin), SplitBehavior::kRemoved, true);
  } else if (type == "WhitespaceSplit") {
    add_split(regex_pattern(kWhiteSpacePattern, origin), SplitBehavior::kRemoved, false);
  } else if (type == "CharDelimiterSplit") {
    add_split(Pattern::literal(spec.at("delimiter").get<std::string>()), SplitBehavior::kRemoved,
              false);
  } else if (type == "Metaspace") {
    add_metaspace(spec, origin);
  } else if (type == "ByteLevel") {
    if (spec.value("add_prefix_space", true)) steps_.push_back({Step::Kind::kPrefixSpace, {}, {}});
    if (spec.value("use_regex", true))
      add_split(regex_pattern(kGpt2Pattern, origin), SplitBehavior::kIsolated, false);
    steps_.push_back({Step::Kind::kByteLevel, {}, {}});
  } else {
    throw DataError("tokenizer", origin + ": pre-tokenizer type \"" + type + "\" is not supported",
                    "supported: Sequence, Split, Digits, Punctuation, Whitespace, "
                    "WhitespaceSplit, CharDelimiterSplit, Metaspace, ByteLevel, "
                    "BertPreTokenizer; prepare the data with scripts/prepare_data_hf.py instead");
  }
}

void PreTokenizer::split_piece(const Step& step, Piece& piece, std::vector<Piece>& out) {
  auto parts = segments(piece.text, step.pattern.find_all(piece.text));
  if (step.invert)
    for (auto& part : parts) part.is_match = !part.is_match;
  for (const auto& part : apply_behavior(std::move(parts), step.behavior))
    if (!part.is_match && part.end > part.begin)
      out.push_back({piece.text.substr(part.begin, part.end - part.begin),
                     piece.at_start && part.begin == 0});
}

void PreTokenizer::apply(const Step& step, std::vector<Piece>& pieces) {
  std::vector<Piece> out;
  out.reserve(pieces.size());
  std::vector<std::pair<std::string, bool>> metaspace_pieces;
  for (auto& piece : pieces) {
    switch (step.kind) {
      case Step::Kind::kPrefixSpace:
        if (piece.text.empty() || piece.text[0] != ' ') piece.text.insert(piece.text.begin(), ' ');
        out.push_back(std::move(piece));
        break;
      case Step::Kind::kByteLevel:
        out.push_back({to_byte_level(piece.text), piece.at_start});
        break;
      case Step::Kind::kSplit:
        split_piece(step, piece, out);
        break;
      case Step::Kind::kMetaspace: {
        const bool prepend =
            step.prepend == Prepend::kAlways || (step.prepend == Prepend::kFirst && piece.at_start);
        metaspace_pieces.clear();
        metaspace(step.literal, prepend, step.split, piece.text, piece.at_start, metaspace_pieces);
        for (auto& [text, at_start] : metaspace_pieces) out.push_back({std::move(text), at_start});
        break;
      }
    }
  }
  pieces = std::move(out);
}

void PreTokenizer::split(const std::string& text, bool at_start,
                         std::vector<std::string>& pieces) const {
  if (text.empty()) return;
  std::vector<Piece> current{{text, at_start}};
  for (const auto& step : steps_) apply(step, current);
  for (auto& piece : current)
    if (!piece.text.empty()) pieces.push_back(std::move(piece.text));
}

}  // namespace nss::tokenizer

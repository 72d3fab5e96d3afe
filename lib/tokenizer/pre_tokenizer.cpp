#include "tokenizer/pre_tokenizer.h"

#include <utility>

#include "core/error.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/regex.h"

namespace nss::tokenizer {
namespace {

// GPT-2's pattern, which ByteLevel(use_regex=true) splits with.
constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// Digits: Rust's char::is_numeric is the N category, one code point a match.
constexpr const char* kNumericPattern = R"(\p{N})";

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

std::vector<std::pair<size_t, size_t>> find_literal(const std::string& text,
                                                    const std::string& literal) {
  std::vector<std::pair<size_t, size_t>> matches;
  if (literal.empty()) return matches;
  for (size_t at = text.find(literal); at != std::string::npos;
       at = text.find(literal, at + literal.size())) {
    matches.emplace_back(at, at + literal.size());
  }
  return matches;
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

}  // namespace

PreTokenizer PreTokenizer::from_json(const nlohmann::json& spec, const std::string& origin) {
  PreTokenizer result;
  if (!spec.is_null()) result.add(spec, origin);
  return result;
}

void PreTokenizer::add(const nlohmann::json& spec, const std::string& origin) {
  const std::string type = spec.at("type").get<std::string>();
  if (type == "Sequence") {
    for (const auto& inner : spec.at("pretokenizers")) add(inner, origin);
  } else if (type == "Split") {
    Step step{Step::Kind::kSplit, nullptr, {}, SplitBehavior::kIsolated, false};
    const auto& pattern = spec.at("pattern");
    if (pattern.contains("Regex")) {
      step.regex = std::make_shared<Regex>(pattern.at("Regex").get<std::string>(), origin);
    } else if (pattern.contains("String")) {
      step.literal = pattern.at("String").get<std::string>();
    } else {
      throw DataError("tokenizer", origin + ": Split pattern " + pattern.dump() +
                                       " is neither {\"Regex\": ...} nor {\"String\": ...}");
    }
    step.behavior = parse_behavior(spec.at("behavior").get<std::string>(), origin);
    step.invert = spec.value("invert", false);
    steps_.push_back(std::move(step));
  } else if (type == "Digits") {
    const bool individual = spec.value("individual_digits", false);
    steps_.push_back({Step::Kind::kSplit,
                      std::make_shared<Regex>(kNumericPattern, origin),
                      {},
                      individual ? SplitBehavior::kIsolated : SplitBehavior::kContiguous,
                      false});
  } else if (type == "ByteLevel") {
    if (spec.value("add_prefix_space", true)) {
      steps_.push_back({Step::Kind::kPrefixSpace, nullptr, {}, SplitBehavior::kIsolated, false});
    }
    if (spec.value("use_regex", true)) {
      steps_.push_back({Step::Kind::kSplit,
                        std::make_shared<Regex>(kGpt2Pattern, origin),
                        {},
                        SplitBehavior::kIsolated,
                        false});
    }
    steps_.push_back({Step::Kind::kByteLevel, nullptr, {}, SplitBehavior::kIsolated, false});
  } else {
    throw DataError("tokenizer", origin + ": pre-tokenizer type \"" + type + "\" is not supported",
                    "supported: Sequence, Split, Digits, ByteLevel (Llama 3, SmolLM2); prepare "
                    "the data with scripts/prepare_data_hf.py instead");
  }
}

void PreTokenizer::apply(const Step& step, std::vector<std::string>& pieces) {
  std::vector<std::string> out;
  out.reserve(pieces.size());
  for (auto& piece : pieces) {
    switch (step.kind) {
      case Step::Kind::kPrefixSpace:
        if (piece.empty() || piece[0] != ' ') piece.insert(piece.begin(), ' ');
        out.push_back(std::move(piece));
        break;
      case Step::Kind::kByteLevel:
        out.push_back(to_byte_level(piece));
        break;
      case Step::Kind::kSplit: {
        auto parts = segments(
            piece, step.regex ? step.regex->find_all(piece) : find_literal(piece, step.literal));
        if (step.invert) {
          for (auto& part : parts) part.is_match = !part.is_match;
        }
        for (const auto& part : apply_behavior(std::move(parts), step.behavior)) {
          if (!part.is_match && part.end > part.begin) {
            out.push_back(piece.substr(part.begin, part.end - part.begin));
          }
        }
        break;
      }
    }
  }
  pieces = std::move(out);
}

void PreTokenizer::split(const std::string& text, std::vector<std::string>& pieces) const {
  if (text.empty()) return;
  std::vector<std::string> current{text};
  for (const auto& step : steps_) apply(step, current);
  for (auto& piece : current) {
    if (!piece.empty()) pieces.push_back(std::move(piece));
  }
}

}  // namespace nss::tokenizer

#include "tokenizer/pattern.h"

#include "core/error.h"
#include "core/utf8.h"
#include "tokenizer/regex.h"

namespace nss::tokenizer {

Pattern Pattern::from_json(const nlohmann::json& spec, const std::string& what,
                           const std::string& origin) {
  if (spec.is_object() && spec.contains("Regex"))
    return regex(std::make_shared<Regex>(spec.at("Regex").get<std::string>(), origin));
  if (spec.is_object() && spec.contains("String"))
    return literal(spec.at("String").get<std::string>());
  throw DataError("tokenizer", origin + ": " + what + " " + spec.dump() +
                                   " is neither {\"Regex\": ...} nor {\"String\": ...}");
}

Pattern Pattern::literal(std::string literal) {
  Pattern pattern;
  pattern.literal_ = std::move(literal);
  return pattern;
}

Pattern Pattern::regex(std::shared_ptr<const Regex> regex) {
  Pattern pattern;
  pattern.regex_ = std::move(regex);
  return pattern;
}

Pattern Pattern::characters(bool (*matches)(char32_t)) {
  Pattern pattern;
  pattern.matches_ = matches;
  return pattern;
}

std::vector<std::pair<size_t, size_t>> Pattern::find_all(const std::string& text) const {
  if (regex_) return regex_->find_all(text);
  std::vector<std::pair<size_t, size_t>> matches;
  if (matches_) {
    for (size_t pos = 0; pos < text.size();) {
      const size_t begin = pos;
      if (matches_(next_code_point(text, pos))) matches.emplace_back(begin, pos);
    }
    return matches;
  }
  if (literal_.empty()) return matches;
  for (size_t at = text.find(literal_); at != std::string::npos;
       at = text.find(literal_, at + literal_.size()))
    matches.emplace_back(at, at + literal_.size());
  return matches;
}

std::string Pattern::replace(const std::string& text, const std::string& content) const {
  std::string out;
  size_t previous = 0;
  for (const auto& [begin, end] : find_all(text)) {
    out.append(text, previous, begin - previous);
    out.append(content);
    previous = end;
  }
  out.append(text, previous, std::string::npos);
  return out;
}

}  // namespace nss::tokenizer

#include "tokenizer/decoder.h"

#include "core/error.h"
#include "core/utf8.h"
#include "tokenizer/byte_level.h"

namespace nss::tokenizer {
namespace {

constexpr const char* kReplacementCharacter = "\xEF\xBF\xBD";  // U+FFFD

// `raw`: the bytes as they are, for token_bytes; decoding makes them valid.
std::vector<std::string> byte_level(const std::vector<std::string>& tokens, bool raw) {
  std::string bytes;
  for (const auto& token : tokens) append_byte_level_bytes(token, bytes);
  return {raw ? bytes : utf8_lossy(bytes)};
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The byte of a "<0xXX>" token, as Rust's u8::from_str_radix(XX, 16) reads
// XX (a leading '+' and either case accepted); -1 for any other token.
int fallback_byte(const std::string& token) {
  if (token.size() != 6 || token.compare(0, 3, "<0x") != 0 || token[5] != '>') return -1;
  if (token[3] == '+') return hex_digit(token[4]);
  const int high = hex_digit(token[3]), low = hex_digit(token[4]);
  return high < 0 || low < 0 ? -1 : high * 16 + low;
}

// Runs of byte tokens become their text when it is valid UTF-8 (or `raw`),
// else one replacement character per byte.
std::vector<std::string> byte_fallback(std::vector<std::string> tokens, bool raw) {
  std::vector<std::string> out;
  std::string bytes;
  const auto flush = [&] {
    if (bytes.empty()) return;
    if (raw || is_valid_utf8(bytes))
      out.push_back(bytes);
    else
      out.insert(out.end(), bytes.size(), kReplacementCharacter);
    bytes.clear();
  };
  for (auto& token : tokens) {
    const int byte = fallback_byte(token);
    if (byte >= 0) {
      bytes.push_back(static_cast<char>(byte));
      continue;
    }
    flush();
    out.push_back(std::move(token));
  }
  flush();
  return out;
}

std::vector<std::string> code_points(const std::string& token) {
  std::vector<std::string> out;
  for (size_t pos = 0; pos < token.size();) {
    const size_t start = pos;
    next_code_point(token, pos);
    out.push_back(token.substr(start, pos - start));
  }
  return out;
}

// tokenizers' Strip: up to `start` leading and `stop` trailing copies of
// `content` go, then it keeps token.len() (bytes) - cuts characters, the
// count wrapping as Rust's release build computes it.
std::string strip(const std::string& token, const std::string& content, size_t start, size_t stop) {
  const std::vector<std::string> chars = code_points(token);
  size_t start_cut = 0, stop_cut = 0;
  while (start_cut < chars.size() && start_cut < start && chars[start_cut] == content) ++start_cut;
  while (stop_cut < chars.size() && stop_cut < stop &&
         chars[chars.size() - 1 - stop_cut] == content)
    ++stop_cut;
  const size_t keep = token.size() - start_cut - stop_cut;  // may wrap: take everything
  std::string out;
  for (size_t i = start_cut, taken = 0; i < chars.size() && taken < keep; ++i, ++taken)
    out.append(chars[i]);
  return out;
}

std::vector<std::string> metaspace(std::vector<std::string> tokens, const std::string& replacement,
                                   bool prepend) {
  for (size_t i = 0; i < tokens.size(); ++i)
    tokens[i] = Pattern::literal(replacement).replace(tokens[i], i == 0 && prepend ? "" : " ");
  return tokens;
}

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

// tokenizers' wordpiece cleanup, each replacement over the whole token in
// this order.
std::string cleanup(std::string token) {
  static const std::pair<std::string, std::string> kReplacements[] = {
      {" .", "."},   {" ?", "?"},     {" !", "!"},    {" ,", ","},
      {" ' ", "'"},  {" n't", "n't"}, {" 'm", "'m"},  {" do not", " don't"},
      {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  for (const auto& [from, to] : kReplacements) replace_all(token, from, to);
  return token;
}

// Tokens after the first: a prefixed one loses its (first) prefix and joins
// the previous, any other starts after a space.
std::vector<std::string> wordpiece(std::vector<std::string> tokens, const std::string& prefix,
                                   bool clean) {
  for (size_t i = 0; i < tokens.size(); ++i) {
    std::string& token = tokens[i];
    if (i > 0) {
      if (token.compare(0, prefix.size(), prefix) == 0)
        token.erase(0, prefix.size());
      else
        token.insert(0, " ");
    }
    if (clean) token = cleanup(std::move(token));
  }
  return tokens;
}

std::string one_character(const nlohmann::json& value, const std::string& what,
                          const std::string& origin) {
  const std::string text = value.get<std::string>();
  if (!is_valid_utf8(text) || code_points(text).size() != 1)
    throw DataError("tokenizer",
                    origin + ": decoder " + what + " " + value.dump() + " is not one character");
  return text;
}

}  // namespace

Decoder Decoder::from_json(const nlohmann::json& spec, const std::string& origin) {
  Decoder result;
  if (spec.is_null()) return result;
  result.joined_with_spaces_ = false;
  result.add(spec, origin);
  return result;
}

void Decoder::add(const nlohmann::json& spec, const std::string& origin) {
  const std::string type = spec.at("type").get<std::string>();
  Step step{Step::Kind::kFuse, {}, {}, {}};
  if (type == "Sequence") {
    for (const auto& inner : spec.at("decoders")) add(inner, origin);
    return;
  } else if (type == "ByteLevel") {
    step.kind = Step::Kind::kByteLevel;
  } else if (type == "Replace") {
    step.kind = Step::Kind::kReplace;
    step.content = spec.at("content").get<std::string>();
    step.pattern = Pattern::from_json(spec.at("pattern"), "Replace pattern", origin);
  } else if (type == "ByteFallback") {
    step.kind = Step::Kind::kByteFallback;
  } else if (type == "Fuse") {
    step.kind = Step::Kind::kFuse;
  } else if (type == "Strip") {
    step.kind = Step::Kind::kStrip;
    step.literal = one_character(spec.at("content"), "Strip content", origin);
    for (const char* key : {"start", "stop"}) {
      const auto value = spec.value(key, nlohmann::json(0));
      if (!value.is_number_unsigned())
        throw DataError("tokenizer", origin + ": decoder Strip " + key + " " + value.dump() +
                                         " is not a count of characters");
    }
    step.start = spec.value("start", size_t{0});
    step.stop = spec.value("stop", size_t{0});
  } else if (type == "Metaspace") {
    step.kind = Step::Kind::kMetaspace;
    step.literal = one_character(spec.value("replacement", nlohmann::json("\u2581")),
                                 "Metaspace replacement", origin);
    const std::string scheme = spec.value(
        "prepend_scheme", std::string(spec.value("add_prefix_space", true) ? "always" : "never"));
    step.prepend = scheme != "never";
  } else if (type == "WordPiece") {
    step.kind = Step::Kind::kWordPiece;
    step.literal = spec.value("prefix", std::string("##"));
    step.cleanup = spec.value("cleanup", true);
  } else {
    throw DataError(
        "tokenizer", origin + ": decoder type \"" + type + "\" is not supported",
        "supported: Sequence, ByteLevel, Replace, ByteFallback, Fuse, Strip, "
        "Metaspace, WordPiece; prepare the data with scripts/prepare_data_hf.py instead");
  }
  steps_.push_back(std::move(step));
}

std::vector<std::string> Decoder::apply(const Step& step, std::vector<std::string> tokens,
                                        bool raw) {
  switch (step.kind) {
    case Step::Kind::kByteLevel:
      return byte_level(tokens, raw);
    case Step::Kind::kReplace:
      for (auto& token : tokens) token = step.pattern.replace(token, step.content);
      return tokens;
    case Step::Kind::kByteFallback:
      return byte_fallback(std::move(tokens), raw);
    case Step::Kind::kFuse: {
      std::string fused;
      for (const auto& token : tokens) fused.append(token);
      return {fused};
    }
    case Step::Kind::kStrip:
      for (auto& token : tokens) token = strip(token, step.literal, step.start, step.stop);
      return tokens;
    case Step::Kind::kMetaspace:
      return metaspace(std::move(tokens), step.literal, step.prepend);
    case Step::Kind::kWordPiece:
      return wordpiece(std::move(tokens), step.literal, step.cleanup);
  }
  return tokens;
}

std::string Decoder::decode(std::vector<std::string> tokens) const {
  return utf8_lossy(run(std::move(tokens), false));
}

std::string Decoder::decode_bytes(std::vector<std::string> tokens) const {
  return run(std::move(tokens), true);
}

bool Decoder::tokens_decode_alone() const {
  for (const auto& step : steps_)
    if (step.kind == Step::Kind::kWordPiece && step.cleanup) return false;
  return true;
}

std::string Decoder::run(std::vector<std::string> tokens, bool raw) const {
  std::string out;
  if (joined_with_spaces_) {
    for (size_t i = 0; i < tokens.size(); ++i) out.append(i == 0 ? "" : " ").append(tokens[i]);
    return out;
  }
  for (const auto& step : steps_) tokens = apply(step, std::move(tokens), raw);
  for (const auto& token : tokens) out.append(token);
  return out;
}

}  // namespace nss::tokenizer

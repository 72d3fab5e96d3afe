#include "tokenizer/byte_level.h"

#include <vector>

#include "core/utf8.h"

namespace nss::tokenizer {
namespace {

// Bytes GPT-2 found printable keep their own code point; the others get
// 256, 257, ... in byte order.
std::array<char32_t, 256> make_byte_to_char() {
  std::array<char32_t, 256> table{};
  char32_t next = 256;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174);
    table[b] = printable ? static_cast<char32_t>(b) : next++;
  }
  return table;
}

struct Tables {
  std::array<std::string, 256> encoded;  // UTF-8 of each byte's code point
  std::vector<int> char_to_byte;         // code point -> byte, -1 outside the alphabet
};

const Tables& tables() {
  static const Tables t = [] {
    Tables result;
    result.char_to_byte.assign(512, -1);
    for (int b = 0; b < 256; ++b) {
      const char32_t cp = byte_to_char()[b];
      append_utf8(cp, result.encoded[b]);
      result.char_to_byte[cp] = b;
    }
    return result;
  }();
  return t;
}

}  // namespace

const std::array<char32_t, 256>& byte_to_char() {
  static const std::array<char32_t, 256> table = make_byte_to_char();
  return table;
}

std::string to_byte_level(std::string_view bytes) {
  const Tables& t = tables();
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const char c : bytes) out.append(t.encoded[static_cast<unsigned char>(c)]);
  return out;
}

void append_byte_level_bytes(std::string_view token, std::string& out) {
  const Tables& t = tables();
  const size_t start = out.size();
  for (size_t pos = 0; pos < token.size();) {
    const char32_t cp = next_code_point(token, pos);
    if (cp >= t.char_to_byte.size() || t.char_to_byte[cp] < 0) {
      out.resize(start);
      out.append(token);
      return;
    }
    out.push_back(static_cast<char>(t.char_to_byte[cp]));
  }
}

}  // namespace nss::tokenizer

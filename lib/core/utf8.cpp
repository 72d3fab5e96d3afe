#include "core/utf8.h"

namespace nss {
namespace {

// Length of the valid UTF-8 sequence starting at `bytes[pos]`, or the length
// of its maximal invalid subpart negated (at least 1).
int sequence_length(std::string_view bytes, size_t pos) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(bytes[i]); };
  const unsigned char lead = byte(pos);
  if (lead < 0x80) return 1;
  int length = 0;
  unsigned char low = 0x80, high = 0xBF;  // the range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;   // overlong
    if (lead == 0xED) high = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;   // overlong
    if (lead == 0xF4) high = 0x8F;  // beyond U+10FFFF
  } else {
    return -1;
  }
  for (int i = 1; i < length; ++i) {
    if (pos + i >= bytes.size()) return -i;
    const unsigned char c = byte(pos + i);
    const bool ok = i == 1 ? (c >= low && c <= high) : (c >= 0x80 && c <= 0xBF);
    if (!ok) return -i;
  }
  return length;
}

}  // namespace

std::size_t utf8_character_length(std::string_view bytes, std::size_t pos) {
  const int length = sequence_length(bytes, pos);
  return length > 0 ? static_cast<std::size_t>(length) : 0;
}

std::u32string decode_utf8_lossy(std::string_view bytes) {
  std::u32string out;
  out.reserve(bytes.size());
  for (std::size_t pos = 0; pos < bytes.size();) {
    const int length = sequence_length(bytes, pos);
    if (length > 0) {
      out.push_back(next_code_point(bytes, pos));
    } else {
      out.push_back(U'\uFFFD');
      pos += static_cast<std::size_t>(-length);
    }
  }
  return out;
}

std::size_t count_utf8_characters(std::string_view bytes) {
  std::size_t count = 0;
  for (const char c : bytes) count += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return count;
}

bool is_valid_utf8(std::string_view bytes) {
  for (size_t pos = 0; pos < bytes.size();) {
    const int length = sequence_length(bytes, pos);
    if (length < 0) return false;
    pos += length;
  }
  return true;
}

std::string utf8_lossy(std::string_view bytes) {
  if (is_valid_utf8(bytes)) return std::string(bytes);
  std::string out;
  out.reserve(bytes.size() + 16);
  for (size_t pos = 0; pos < bytes.size();) {
    const int length = sequence_length(bytes, pos);
    if (length > 0) {
      out.append(bytes.substr(pos, length));
      pos += length;
    } else {
      out.append("\xEF\xBF\xBD");
      pos += -length;
    }
  }
  return out;
}

void append_utf8(char32_t cp, std::string& out) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

char32_t next_code_point(std::string_view text, size_t& pos) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(pos);
  if (lead < 0x80) {
    pos += 1;
    return lead;
  }
  int length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
  char32_t cp = lead & (0x7F >> length);
  for (int i = 1; i < length; ++i) cp = (cp << 6) | (byte(pos + i) & 0x3F);
  pos += length;
  return cp;
}

}  // namespace nss

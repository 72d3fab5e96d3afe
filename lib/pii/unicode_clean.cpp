#include "pii/unicode_clean.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "core/utf8.h"

namespace nss::pii {
namespace {

// stdnum 1.18 util._char_map, grouped by the ASCII character it gives
// (tests/pii/test_validators_stdnum.py compares every code point).
constexpr char32_t kToHyphen[] = {0x002D, 0x00AF, 0x02D7, 0x058A, 0x05BE, 0x1680, 0x180A,
                                  0x2010, 0x2011, 0x2012, 0x2013, 0x2014, 0x2015, 0x203E,
                                  0x2043, 0x207B, 0x208B, 0x2212, 0x23AF, 0x23BA, 0x23BB,
                                  0x23BC, 0x23BD, 0x23E4, 0xFE63, 0xFF0D, 0xFFE3};
constexpr char32_t kToAsterisk[] = {0x002A, 0x066D, 0x070D, 0x204E, 0x2055, 0x2217, 0x22C6,
                                    0x2731, 0x2732, 0x2733, 0x273A, 0x273B, 0x273C, 0x273D,
                                    0x274A, 0x274B, 0xA60E, 0xFE61, 0xFF0A};
constexpr char32_t kToComma[] = {0x002C, 0x00B8, 0x060C, 0x066B, 0x066C, 0x201A, 0x2032,
                                 0x2E34, 0x3001, 0xFE10, 0xFE50, 0xFE51, 0xFF0C};
constexpr char32_t kToFullStop[] = {0x002E, 0x00B7, 0x02D9, 0x0387, 0x06D4,  0x0701,  0x0702,
                                    0x0830, 0x0F0B, 0x0F0C, 0x16EB, 0x2022,  0x2024,  0x2027,
                                    0x2219, 0x22C5, 0x2E31, 0x2E33, 0x3002,  0x30FB,  0xFBB2,
                                    0xFBB3, 0xFE52, 0xFF0E, 0xFF65, 0x10101, 0x1091F, 0x10A50};
constexpr char32_t kToSlash[] = {0x002F, 0x083C, 0x2044, 0x2215, 0x27CB, 0x29F8, 0xFF0F};
constexpr char32_t kToColon[] = {0x003A, 0x1361, 0x16EC, 0x1804, 0xFE13, 0xFE30, 0xFE55, 0xFF1A};
constexpr char32_t kToSpace[] = {0x0020, 0x00A0, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005,
                                 0x2006, 0x2007, 0x2008, 0x2009, 0x200A, 0x202F, 0x205F, 0x3000};
constexpr char32_t kToApostrophe[] = {0x0027, 0x0060, 0x00B4, 0x02B9, 0x02BB, 0x02BC,
                                      0x02BE, 0x02BF, 0x02C8, 0x0300, 0x0301, 0x0312,
                                      0x0313, 0x055A, 0x2018, 0x2019, 0x201B};
// Fullwidth and the five mathematical digit sets: the digit zero of each,
// the other nine follow it.
constexpr char32_t kDigitZeros[] = {0xFF10, 0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7EC, 0x1D7F6};

using CharMap = std::vector<std::pair<char32_t, char>>;

template <std::size_t N>
void add_all(CharMap& map, const char32_t (&code_points)[N], char ascii) {
  for (char32_t cp : code_points) map.emplace_back(cp, ascii);
}

const CharMap& look_alikes() {
  static const CharMap map = [] {
    CharMap m;
    add_all(m, kToHyphen, '-');
    add_all(m, kToAsterisk, '*');
    add_all(m, kToComma, ',');
    add_all(m, kToFullStop, '.');
    add_all(m, kToSlash, '/');
    add_all(m, kToColon, ':');
    add_all(m, kToSpace, ' ');
    add_all(m, kToApostrophe, '\'');
    for (char32_t zero : kDigitZeros) {
      for (int d = 0; d < 10; ++d) m.emplace_back(zero + d, static_cast<char>('0' + d));
    }
    std::sort(m.begin(), m.end());
    return m;
  }();
  return map;
}

// The zero of every run of ten Nd digits (Unicode 14; Unicode keeps each
// script's decimal digits contiguous, zero first), ASCII's included.
constexpr char32_t kDecimalZeros[] = {
    0x0030,  0x0660,  0x06F0,  0x07C0,  0x0966,  0x09E6,  0x0A66,  0x0AE6,  0x0B66,  0x0BE6,
    0x0C66,  0x0CE6,  0x0D66,  0x0DE6,  0x0E50,  0x0ED0,  0x0F20,  0x1040,  0x1090,  0x17E0,
    0x1810,  0x1946,  0x19D0,  0x1A80,  0x1A90,  0x1B50,  0x1BB0,  0x1C40,  0x1C50,  0xA620,
    0xA8D0,  0xA900,  0xA9D0,  0xA9F0,  0xAA50,  0xABF0,  0xFF10,  0x104A0, 0x10D30, 0x11066,
    0x110F0, 0x11136, 0x111D0, 0x112F0, 0x11450, 0x114D0, 0x11650, 0x116C0, 0x11730, 0x118E0,
    0x11950, 0x11C50, 0x11D50, 0x11DA0, 0x16A60, 0x16AC0, 0x16B50, 0x1D7CE, 0x1D7D8, 0x1D7E2,
    0x1D7EC, 0x1D7F6, 0x1E140, 0x1E2F0, 0x1E950, 0x1FBF0};

// str.upper() of the non-ASCII characters whose uppercase is all ASCII.
constexpr std::pair<char32_t, std::string_view> kAsciiUppercase[] = {
    {0x00DF, "SS"}, {0x0131, "I"},   {0x017F, "S"},   {0xFB00, "FF"}, {0xFB01, "FI"},
    {0xFB02, "FL"}, {0xFB03, "FFI"}, {0xFB04, "FFL"}, {0xFB05, "ST"}, {0xFB06, "ST"}};

bool is_python_space(char32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20) || cp == 0x85 || cp == 0xA0 ||
         cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 ||
         cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

// The code point of the well-formed character at text[pos] and its length,
// or length 0 for a byte that starts none.
std::pair<char32_t, std::size_t> character_at(std::string_view text, std::size_t pos) {
  const std::size_t length = utf8_character_length(text, pos);
  if (length == 0) return {0, 0};
  std::size_t next = pos;
  return {next_code_point(text, next), length};
}

// `text` with each well-formed character replaced by what `map(cp,
// character)` appends to the output; a byte that is not UTF-8 is kept.
template <typename Map>
std::string map_characters(std::string_view text, Map map) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t pos = 0; pos < text.size();) {
    const auto [cp, length] = character_at(text, pos);
    if (length == 0) {
      out.push_back(text[pos++]);
      continue;
    }
    map(cp, text.substr(pos, length), out);
    pos += length;
  }
  return out;
}

}  // namespace

std::string stdnum_clean(std::string_view text, std::string_view deletechars) {
  const CharMap& map = look_alikes();
  return map_characters(text, [&](char32_t cp, std::string_view character, std::string& out) {
    const auto hit = std::lower_bound(map.begin(), map.end(), std::make_pair(cp, '\0'));
    if (hit != map.end() && hit->first == cp) {
      if (deletechars.find(hit->second) == std::string_view::npos) out.push_back(hit->second);
    } else if (cp >= 0x80 || deletechars.find(static_cast<char>(cp)) == std::string_view::npos) {
      out.append(character);
    }
  });
}

std::string_view python_strip(std::string_view text) {
  std::size_t begin = 0;
  while (begin < text.size()) {
    const auto [cp, length] = character_at(text, begin);
    if (length == 0 || !is_python_space(cp)) break;
    begin += length;
  }
  std::size_t end = text.size();
  while (end > begin) {
    std::size_t start = end - 1;  // back to the lead byte of the last character
    while (start > begin && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
    const auto [cp, length] = character_at(text, start);
    if (length != end - start || !is_python_space(cp)) break;
    end = start;
  }
  return text.substr(begin, end - begin);
}

std::string python_upper_ascii(std::string_view text) {
  return map_characters(text, [](char32_t cp, std::string_view character, std::string& out) {
    const auto* special = std::find_if(std::begin(kAsciiUppercase), std::end(kAsciiUppercase),
                                       [cp](const auto& entry) { return entry.first == cp; });
    if (cp >= 'a' && cp <= 'z') {
      out.push_back(static_cast<char>(cp - 'a' + 'A'));
    } else if (special != std::end(kAsciiUppercase)) {
      out.append(special->second);
    } else {
      out.append(character);
    }
  });
}

int python_decimal_value(char32_t cp) {
  const auto* after = std::upper_bound(std::begin(kDecimalZeros), std::end(kDecimalZeros), cp);
  if (after == std::begin(kDecimalZeros)) return -1;
  const char32_t zero = *(after - 1);
  return cp - zero < 10 ? static_cast<int>(cp - zero) : -1;
}

}  // namespace nss::pii

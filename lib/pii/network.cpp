#include "pii/network.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/utf8.h"
#include "pii/ascii_text.h"
#include "pii/unicode_clean.h"

namespace nss::pii {
namespace {

// Python's str.split(separator) (UTF-8 never has an ASCII byte inside a
// character, so splitting bytes splits characters).
std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  std::size_t begin = 0;
  for (std::size_t pos = text.find(separator); pos != std::string_view::npos;
       pos = text.find(separator, begin)) {
    parts.push_back(text.substr(begin, pos - begin));
    begin = pos + 1;
  }
  parts.push_back(text.substr(begin));
  return parts;
}

bool is_hex(char c) {
  return is_ascii_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

bool all_of(std::string_view text, bool (*predicate)(char)) {
  for (char c : text) {
    if (!predicate(c)) return false;
  }
  return true;
}

// ipaddress' _parse_octet.
bool octet_valid(std::string_view octet) {
  if (octet.empty() || octet.size() > 3 || !all_of(octet, is_ascii_digit)) return false;
  if (octet.size() > 1 && octet[0] == '0') return false;
  return std::stoi(std::string(octet)) <= 255;
}

// IPv4's _ip_int_from_string.
std::optional<std::uint32_t> ipv4_int(std::string_view text) {
  const std::vector<std::string_view> octets = split(text, '.');
  if (octets.size() != 4) return std::nullopt;
  std::uint32_t value = 0;
  for (std::string_view octet : octets) {
    if (!octet_valid(octet)) return std::nullopt;
    value = (value << 8) | static_cast<std::uint32_t>(std::stoi(std::string(octet)));
  }
  return value;
}

// _prefix_from_prefix_string: ASCII digits that int() reads (Python 3.11
// refuses more than 4300 digits) to at most `max_length`.
bool prefix_length_valid(std::string_view text, int max_length) {
  if (text.empty() || text.size() > 4300 || !all_of(text, is_ascii_digit)) return false;
  const std::size_t first = text.find_first_not_of('0');
  if (first == std::string_view::npos) return true;
  return text.size() - first <= 3 && std::stoi(std::string(text.substr(first))) <= max_length;
}

// Ones then zeros, as _prefix_from_ip_int accepts (all ones and all zeros too).
bool is_netmask(std::uint32_t mask) {
  const std::uint32_t host_bits = ~mask;
  return (host_bits & (host_bits + 1)) == 0;
}

// _make_netmask of IPv4: a prefix length, else a netmask, else a hostmask.
bool ipv4_mask_valid(std::string_view text) {
  if (prefix_length_valid(text, 32)) return true;
  const std::optional<std::uint32_t> mask = ipv4_int(text);
  return mask && (is_netmask(*mask) || is_netmask(~*mask));
}

bool hextet_valid(std::string_view hextet) {
  return !hextet.empty() && hextet.size() <= 4 && all_of(hextet, is_hex);
}

// IPv6's _ip_int_from_string, without computing the number.
bool ipv6_text_valid(std::string_view text) {
  if (text.empty()) return false;
  std::vector<std::string_view> parts = split(text, ':');
  if (parts.size() < 3) return false;
  if (parts.back().find('.') != std::string_view::npos) {
    if (!ipv4_int(parts.back())) return false;
    parts.back() = "0";  // the two hextets of the IPv4 tail
    parts.push_back("0");
  }
  if (parts.size() > 9) return false;
  std::size_t skip = 0;  // 0: no "::" (index 0 cannot hold the skip)
  for (std::size_t i = 1; i + 1 < parts.size(); ++i) {
    if (!parts[i].empty()) continue;
    if (skip != 0) return false;
    skip = i;
  }
  std::size_t high = parts.size(), low = 0;
  if (skip != 0) {
    high = skip;
    low = parts.size() - skip - 1;
    if (parts.front().empty() && --high != 0) return false;
    if (parts.back().empty() && --low != 0) return false;
    if (high + low > 7) return false;
  } else if (parts.size() != 8 || parts.front().empty() || parts.back().empty()) {
    return false;
  }
  for (std::size_t i = 0; i < high; ++i) {
    if (!hextet_valid(parts[i])) return false;
  }
  for (std::size_t i = parts.size() - low; i < parts.size(); ++i) {
    if (!hextet_valid(parts[i])) return false;
  }
  return true;
}

// IPv6Address(text): no "/", then _split_scope_id.
bool ipv6_address_valid(std::string_view text) {
  if (text.find('/') != std::string_view::npos) return false;
  const std::size_t percent = text.find('%');
  if (percent == std::string_view::npos) return ipv6_text_valid(text);
  const std::string_view zone = text.substr(percent + 1);
  if (zone.empty() || zone.find('%') != std::string_view::npos) return false;
  return ipv6_text_valid(text.substr(0, percent));
}

bool cisco_mac_valid(std::string_view text) {
  const std::vector<std::string_view> groups = split(python_strip(text), '.');
  if (groups.size() != 3) return false;
  for (std::string_view group : groups) {
    if (group.size() != 4 || !all_of(group, is_hex)) return false;
  }
  return true;
}

}  // namespace

bool ipv4_valid(std::string_view text, bool allow_prefix) {
  if (!allow_prefix) return text.find('/') == std::string_view::npos && ipv4_int(text);
  const std::vector<std::string_view> parts = split(text, '/');
  if (parts.size() > 2 || !ipv4_int(parts[0])) return false;
  return parts.size() == 1 || ipv4_mask_valid(parts[1]);
}

bool ipv6_valid(std::string_view text, bool allow_prefix) {
  if (!is_valid_utf8(text)) return false;
  if (!allow_prefix) return ipv6_address_valid(text);
  const std::vector<std::string_view> parts = split(text, '/');
  if (parts.size() > 2 || !ipv6_address_valid(parts[0])) return false;
  return parts.size() == 1 || prefix_length_valid(parts[1], 128);
}

bool stdnum_mac_valid(std::string_view text) {
  if (!is_valid_utf8(text)) return false;
  const std::string cleaned = stdnum_clean(text, " ");
  std::string_view number = python_strip(cleaned);
  int groups = 0;
  for (std::string_view group : split(number, ':')) {
    for (std::string_view part : split(group, '-')) {
      if (++groups > 6 || part.empty() || part.size() > 2 || !all_of(part, is_hex)) return false;
    }
  }
  return groups == 6;
}

bool mac_valid(std::string_view text) {
  return stdnum_mac_valid(text) || (is_valid_utf8(text) && cisco_mac_valid(text));
}

}  // namespace nss::pii

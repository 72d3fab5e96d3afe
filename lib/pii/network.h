// Network addresses as personal data: IPv4 and IPv6 addresses read exactly
// as Python's ipaddress module (3.11) reads them, and MAC addresses as
// python-stdnum's mac module reads them. Validators never throw; text that
// is not valid UTF-8 is never valid.
#pragma once

#include <string_view>

namespace nss::pii {

/// ipaddress.IPv4Address(text): four decimal octets 0–255 of 1–3 ASCII
/// digits, no leading zero but a lone "0", nothing else. With
/// `allow_prefix`, ipaddress.IPv4Interface(text): also "/" and a prefix
/// length 0–32 (ASCII digits, leading zeros allowed, at most Python's 4300)
/// or a netmask or hostmask in dotted form ("/255.255.0.0", "/0.0.255.255").
bool ipv4_valid(std::string_view text, bool allow_prefix);

/// ipaddress.IPv6Address(text): eight hextets of 1–4 hex digits, one "::"
/// for a run of zero hextets, an optional dotted IPv4 tail, an optional
/// "%" and non-empty zone id without "%" or "/". With `allow_prefix`,
/// ipaddress.IPv6Interface(text): also "/" and a prefix length 0–128.
bool ipv6_valid(std::string_view text, bool allow_prefix);

/// stdnum.mac.is_valid(text, validate_manufacturer=False): after stdnum's
/// clean without spaces and strip, six groups of 1–2 hex digits separated by
/// ":" or "-" (a single digit reads as 0x).
bool stdnum_mac_valid(std::string_view text);

/// stdnum_mac_valid, or Cisco's dotted form of three groups of 4 hex digits
/// ("0011.2233.4455"; stripped as stdnum strips).
bool mac_valid(std::string_view text);

}  // namespace nss::pii

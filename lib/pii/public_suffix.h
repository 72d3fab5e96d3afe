// Whether a host name has a registrable domain: the ICANN section of the
// Public Suffix List as Debian's publicsuffix package installs it, read the
// way tldextract reads it (rules, "*." wildcards, "!" exceptions; an unknown
// top-level domain has no public suffix, so "foo.invalidtld" and "localhost"
// are no domain). E-mail and URL detection accept a host only then.
#pragma once

#include <string>
#include <string_view>
#include <unordered_set>

namespace nss::pii {

/// Where Debian installs the list; NSS_PUBLIC_SUFFIX_LIST overrides it.
inline constexpr const char* kDefaultPublicSuffixList =
    "/usr/share/publicsuffix/public_suffix_list.dat";

class PublicSuffixList {
 public:
  /// The list at NSS_PUBLIC_SUFFIX_LIST or kDefaultPublicSuffixList, read
  /// once. DataError naming the file when it is missing or has no ICANN
  /// section, with the hint to install publicsuffix.
  static const PublicSuffixList& system();

  /// The ICANN rules of the list text `text` (DataError naming `origin`).
  PublicSuffixList(std::string_view text, const std::string& origin);

  /// True when `host` (labels compared after ASCII lowercasing, a trailing
  /// dot ignored) has at least one label before its longest public suffix.
  bool has_registrable_domain(std::string_view host) const;

 private:
  std::unordered_set<std::string> rules_, wildcards_, exceptions_;
};

}  // namespace nss::pii

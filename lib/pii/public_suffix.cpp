#include "pii/public_suffix.h"

#include <cstdlib>

#include "core/error.h"
#include "core/fs.h"
#include "pii/ascii_text.h"

namespace nss::pii {

const PublicSuffixList& PublicSuffixList::system() {
  static const PublicSuffixList list = [] {
    const char* path = std::getenv("NSS_PUBLIC_SUFFIX_LIST");
    const std::string file = path && *path ? path : kDefaultPublicSuffixList;
    return PublicSuffixList(read_text_file(file, "pii"), file);
  }();
  return list;
}

PublicSuffixList::PublicSuffixList(std::string_view text, const std::string& origin) {
  const auto begin = text.find("// ===BEGIN ICANN DOMAINS===");
  const auto end = text.find("// ===END ICANN DOMAINS===");
  if (begin == std::string_view::npos || end == std::string_view::npos || end < begin)
    throw DataError("pii", origin + " has no ICANN section of the Public Suffix List",
                    "install Debian's list: apt-get install publicsuffix");
  std::size_t at = begin;
  while (at < end) {
    std::size_t eol = text.find('\n', at);
    if (eol == std::string_view::npos || eol > end) eol = end;
    std::string_view line = text.substr(at, eol - at);
    at = eol + 1;
    line = line.substr(0, line.find_first_of(" \t\r"));
    if (line.empty() || line.substr(0, 2) == "//") continue;
    if (line[0] == '!')
      exceptions_.insert(ascii_lowered(line.substr(1)));
    else if (line.substr(0, 2) == "*.")
      wildcards_.insert(ascii_lowered(line.substr(2)));
    else
      rules_.insert(ascii_lowered(line));
  }
}

bool PublicSuffixList::has_registrable_domain(std::string_view host) const {
  if (!host.empty() && host.back() == '.') host.remove_suffix(1);
  if (host.empty() || host.front() == '.' || host.find("..") != std::string_view::npos)
    return false;
  const std::string name = ascii_lowered(host);
  // Every suffix, longest first ("a.co.uk", "co.uk", "uk"): the first that is
  // a public suffix must leave a label before it.
  std::size_t labels_before = 0;
  for (std::size_t start = 0; start != std::string::npos; ++labels_before) {
    const std::string suffix = name.substr(start);
    if (exceptions_.count(suffix)) return true;  // "!x.y": x.y is registrable itself
    const auto parent = suffix.find('.');
    if (rules_.count(suffix) ||
        (parent != std::string::npos && wildcards_.count(suffix.substr(parent + 1))))
      return labels_before > 0;
    start = name.find('.', start);
    if (start != std::string::npos) ++start;
  }
  return false;
}

}  // namespace nss::pii

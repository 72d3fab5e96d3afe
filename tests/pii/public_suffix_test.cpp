// The registrable-domain rule e-mail and URL detection use: the PSL's ICANN
// rules, wildcards and exceptions, on a small list and on Debian's.
#include "pii/public_suffix.h"

#include <filesystem>

#include <gtest/gtest.h>

#include "core/error.h"

namespace nss::pii {
namespace {

const char* const kList = R"(// header
// ===BEGIN ICANN DOMAINS===
com
uk
co.uk
*.ck
!www.ck
// ===END ICANN DOMAINS===
// ===BEGIN PRIVATE DOMAINS===
blogspot.com
// ===END PRIVATE DOMAINS===
)";

TEST(PublicSuffix, RulesWildcardsAndExceptions) {
  const PublicSuffixList list(kList, "test");
  EXPECT_TRUE(list.has_registrable_domain("example.com"));
  EXPECT_TRUE(list.has_registrable_domain("Mail.Example.COM."));
  EXPECT_TRUE(list.has_registrable_domain("mail.co.uk"));
  EXPECT_FALSE(list.has_registrable_domain("co.uk"));
  EXPECT_FALSE(list.has_registrable_domain("com"));
  EXPECT_FALSE(list.has_registrable_domain("localhost"));
  EXPECT_FALSE(list.has_registrable_domain("foo.invalidtld"));
  EXPECT_FALSE(list.has_registrable_domain("foo.ck"));  // *.ck: foo.ck is a suffix
  EXPECT_TRUE(list.has_registrable_domain("bar.foo.ck"));
  EXPECT_TRUE(list.has_registrable_domain("www.ck"));
  EXPECT_FALSE(list.has_registrable_domain("a..com"));
  EXPECT_FALSE(list.has_registrable_domain(""));
}

TEST(PublicSuffix, ATextWithoutTheIcannSectionIsADataError) {
  EXPECT_THROW(PublicSuffixList("com\n", "x.dat"), DataError);
}

TEST(PublicSuffix, DebiansList) {
  if (!std::filesystem::exists(kDefaultPublicSuffixList))
    GTEST_SKIP() << "publicsuffix is not installed";
  const PublicSuffixList& list = PublicSuffixList::system();
  EXPECT_TRUE(list.has_registrable_domain("example.com"));
  EXPECT_TRUE(list.has_registrable_domain("mail.co.uk"));
  EXPECT_FALSE(list.has_registrable_domain("co.uk"));
}

}  // namespace
}  // namespace nss::pii

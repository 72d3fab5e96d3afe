#include "pii/network.h"

#include <string>

#include <gtest/gtest.h>

namespace nss::pii {
namespace {

TEST(Ipv4Test, PythonIpaddressAddresses) {
  for (const char* valid : {"0.0.0.0", "255.255.255.255", "1.2.3.0", "10.0.0.1", "192.168.1.254"}) {
    EXPECT_TRUE(ipv4_valid(valid, false)) << valid;
    EXPECT_TRUE(ipv4_valid(valid, true)) << valid;
  }
  for (const char* invalid : {"01.2.3.4", "1.2.3.04", "1.2.3", "1.2.3.4.5", "256.1.1.1", "1..3.4",
                              "1.2.3.4 ", " 1.2.3.4", "+1.2.3.4", "1.2.3.4/24", "1.2.3.-4",
                              "\u0661.2.3.4", "1.2.3.0004", "", ".", "...", "1.2.3.4\xff"}) {
    EXPECT_FALSE(ipv4_valid(invalid, false)) << invalid;
  }
}

TEST(Ipv4Test, PythonIpaddressInterfaces) {
  for (const char* valid :
       {"1.2.3.4/24", "1.2.3.4/0", "1.2.3.4/32", "1.2.3.4/024", "1.2.3.4/255.255.0.0",
        "1.2.3.4/0.0.255.255", "1.2.3.4/0.0.0.0", "1.2.3.4/255.255.255.255"}) {
    EXPECT_TRUE(ipv4_valid(valid, true)) << valid;
  }
  for (const char* invalid :
       {"1.2.3.4/33", "1.2.3.4/", "1.2.3.4/24/1", "1.2.3.4/ 24", "1.2.3.4/+24",
        "1.2.3.4/255.0.255.0", "1.2.3.4/255.255.0", "/24", "01.2.3.4/24"}) {
    EXPECT_FALSE(ipv4_valid(invalid, true)) << invalid;
  }
  // Python's int() reads at most 4300 digits.
  EXPECT_TRUE(ipv4_valid("1.2.3.4/" + std::string(4298, '0') + "24", true));
  EXPECT_FALSE(ipv4_valid("1.2.3.4/" + std::string(4299, '0') + "24", true));
}

TEST(Ipv6Test, PythonIpaddressAddresses) {
  for (const char* valid :
       {"::", "::1", "1::", "1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7::", "::2:3:4:5:6:7:8",
        "::ffff:1.2.3.4", "::1.2.3.4", "1:2:3:4:5:6:1.2.3.4", "1:2:3:4:5::1.2.3.4", "2001:DB8::1",
        "2001:0db8:0000:0000:0000:ff00:0042:8329", "fe80::1%eth0", "fe80::1%\u00E9", "::%1:2"}) {
    EXPECT_TRUE(ipv6_valid(valid, false)) << valid;
    EXPECT_TRUE(ipv6_valid(valid, true)) << valid;
  }
  for (const char* invalid : {"1::2::3",
                              "1:2:3:4:5:6:7:8:9",
                              "1:2:3:4:5:6:7::8",
                              ":1:2:3:4:5:6:7",
                              ":::",
                              "1.2.3.4::",
                              "fe80::1%",
                              "fe80::1%a%b",
                              "12345::",
                              "::/0",
                              "1:2",
                              "::G",
                              "::1.2.3",
                              "1:2:3:4:5:6:7:1.2.3.4",
                              "::01.2.3.4",
                              "1:2:3:4:5:6:7",
                              "",
                              ":",
                              " ::1",
                              "::1 ",
                              "::\uFF11",
                              "::1%eth0\xff"}) {
    EXPECT_FALSE(ipv6_valid(invalid, false)) << invalid;
  }
}

TEST(Ipv6Test, PythonIpaddressInterfaces) {
  for (const char* valid : {"::1/128", "::/0", "fe80::1%eth0/64", "::1/0128"}) {
    EXPECT_TRUE(ipv6_valid(valid, true)) << valid;
    EXPECT_FALSE(ipv6_valid(valid, false)) << valid;
  }
  for (const char* invalid : {"::1/129", "::1/", "::1/64/1", "fe80::1%eth/0/64", "::1/ffff::"}) {
    EXPECT_FALSE(ipv6_valid(invalid, true)) << invalid;
  }
}

TEST(Ipv6Test, HugeInputs) {
  std::string colons(1'000'000, ':');
  EXPECT_FALSE(ipv6_valid(colons, true));
  EXPECT_FALSE(ipv6_valid("::1%" + std::string(1'000'000, '%'), false));
  EXPECT_TRUE(ipv6_valid("::1%" + std::string(1'000'000, 'z'), false));
  EXPECT_FALSE(ipv4_valid(std::string(1'000'000, '.'), true));
}

TEST(MacTest, StdnumForms) {
  for (const char* valid :
       {"D0-50-99-84-A2-A0", "d0:50:99:84:a2:a0", "0:1:2:3:4:5", "d0:50-99:84-a2:a0",
        " d0 : 50 : 99 : 84 : a2 : a0 ", "d0\uFF1A50\uFF1A99\uFF1A84\uFF1Aa2\uFF1Aa0",
        "d0\u201350\u201399\u201384\u2013a2\u2013a0", "\u3000d0:50:99:84:a2:a0\n"}) {
    EXPECT_TRUE(stdnum_mac_valid(valid)) << valid;
    EXPECT_TRUE(mac_valid(valid)) << valid;
  }
  for (const char* invalid :
       {"d0:50:99:84:a2", "d0:50:99:84:a2:a0:11", "d0:50:99:84:a2:a00",
        "d0:50:99:84:a2:", "d0:50:99:84:a2:g0", "d0.50.99.84.a2.a0", "d05099.84a2a0",
        "d0:50:99:84:a2:\uFF41\uFF10", "d0:50:99:84:a2:a0\xff", "", ":::::"}) {
    EXPECT_FALSE(stdnum_mac_valid(invalid)) << invalid;
  }
}

TEST(MacTest, CiscoDotsAreOursOnly) {
  EXPECT_TRUE(mac_valid("0011.2233.4455"));
  EXPECT_TRUE(mac_valid(" d050.9984.A2A0 "));
  EXPECT_FALSE(stdnum_mac_valid("0011.2233.4455"));
  EXPECT_FALSE(mac_valid("0011.2233.445"));
  EXPECT_FALSE(mac_valid("0011.2233.4455.6677"));
  EXPECT_FALSE(mac_valid("0011.2233.44g5"));
  EXPECT_FALSE(mac_valid("0011.2233.4455\xff"));
}

}  // namespace
}  // namespace nss::pii

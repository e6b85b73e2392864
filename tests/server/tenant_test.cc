// Who asks (rule 17): tenants from headers, priorities from the API,
// --tenant_weights, and the bound on tenants named in metrics.
#include "server/common/tenant.h"

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "metrics/metrics.h"
#include "util/utf8.h"

namespace server {
namespace {

using testing::HasSubstr;

TEST(Tenant, AHeaderNamesItTrimmedAndCutAndBlankIsDefault) {
  EXPECT_EQ(TenantFromHeader("  acme "), "acme");
  EXPECT_EQ(TenantFromHeader(""), "default");
  EXPECT_EQ(TenantFromHeader("   "), "default");
  EXPECT_EQ(TenantFromHeader(std::string(500, 'x')).size(), domain::kMaxTenantBytes);
  EXPECT_EQ(TenantFromHeader(std::string(128, 'x')), std::string(128, 'x'))
      << "a name that fits stays as it is";
}

TEST(Tenant, UnspecifiedPriorityIsTheCallsDefault) {
  using domain::Priority;
  EXPECT_EQ(PriorityOf(vin::v1::PRIORITY_UNSPECIFIED, Priority::kInteractive),
            Priority::kInteractive);
  EXPECT_EQ(PriorityOf(vin::v1::PRIORITY_UNSPECIFIED, Priority::kBulk), Priority::kBulk);
  EXPECT_EQ(PriorityOf(vin::v1::PRIORITY_BULK, Priority::kInteractive), Priority::kBulk);
  EXPECT_EQ(PriorityOf(vin::v1::PRIORITY_INTERACTIVE, Priority::kBulk),
            Priority::kInteractive);
  EXPECT_EQ(PriorityOf(static_cast<vin::v1::Priority>(7), Priority::kBulk), Priority::kBulk)
      << "a value of a newer client";
}

TEST(Tenant, WeightsParseAndBadOnesNameTheEntry) {
  auto w = ParseTenantWeights("acme:2, beta:0.5");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->at("acme"), 2);
  EXPECT_EQ(w->at("beta"), 0.5);
  EXPECT_TRUE(ParseTenantWeights("")->empty());
  EXPECT_THAT(ParseTenantWeights("acme:2,beta").status().message(),
              HasSubstr("\"beta\" is not name:weight"));
  EXPECT_THAT(ParseTenantWeights("acme:0").status().message(),
              HasSubstr("\"acme:0\""));
  EXPECT_THAT(ParseTenantWeights("acme:0.001").status().message(),
              HasSubstr("from 0.01 to 10000"));
}

TEST(Tenant, WhatReachesALabelIsValidUtf8CutOnACharacter) {
  EXPECT_EQ(TenantFromHeader("\xff\xfe"), "\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(TenantFromHeader("a\nb"),
            "a\xef\xbf\xbd"
            "b");
  // 132 bytes: the start kept is 111 bytes, where the 2-byte character
  // at 110 does not fit whole; then "~" and 16 hex digits.
  const std::string cut = TenantFromHeader(std::string(110, 'a') +
                                           "\xc3\xa9" + std::string(20, 'b'));
  EXPECT_EQ(cut.substr(0, 111), std::string(110, 'a') + "~")
      << "the character that did not fit is left out";
  EXPECT_EQ(cut.size(), 110u + 1 + 2 * kTenantDigestBytes);
  EXPECT_TRUE(util::IsValidUtf8(cut));
}

TEST(Tenant, LongNamesThatStartAlikeStayTwoAndMatchTheirConfiguration) {
  // Certificate subjects of 200 bytes that differ only at the end.
  const std::string a = "CN=" + std::string(190, 's') + ",O=Alpha";
  const std::string b = "CN=" + std::string(190, 's') + ",O=Beta";
  const std::string ta = TenantFromHeader(a), tb = TenantFromHeader(b);
  EXPECT_NE(ta, tb);
  EXPECT_EQ(ta.size(), domain::kMaxTenantBytes);
  EXPECT_EQ(ta, TenantFromHeader(a)) << "the same name, the same tenant";
  auto w = ParseTenantWeights(absl::StrCat("\"", a, "\":3"));
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->count(ta), 1u) << "the configured name is the request's";
  auto list = ParseTenantList(absl::StrCat("\"", b, "\",web"), "--x");
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->front(), tb);
  EXPECT_EQ(list->back(), "web");
  // A header that spells the digested form of the configured name is not
  // it: it is digested itself.
  EXPECT_NE(TenantFromHeader(ta), ta);
  EXPECT_NE(TenantFromHeader("acme~0123456789abcdef"), "acme~0123456789abcdef");
  EXPECT_EQ(TenantFromHeader("acme~0123"), "acme~0123") << "no digest's shape";
}

TEST(TrustedProxies, AddressesAndBlocks) {
  auto p = TrustedProxies::Parse(
      "127.0.0.0/8, ::1/128, 10.1.2.3, 192.168.0.0/16, fd00::/8");
  ASSERT_TRUE(p.ok()) << p.status();
  for (const char* yes :
       {"127.0.0.1", "127.255.0.9", "::1", "[::1]", "10.1.2.3", "192.168.77.1",
        "::ffff:127.0.0.1", "fd12::1"}) {
    EXPECT_TRUE(p->Trusts(yes)) << yes;
  }
  for (const char* no : {"10.1.2.4", "128.0.0.1", "::2", "fe80::1", "",
                         "localhost", "192.169.0.1", "unix:/tmp/x"}) {
    EXPECT_FALSE(p->Trusts(no)) << no;
  }
  EXPECT_FALSE(TrustedProxies::Parse("")->Trusts("127.0.0.1")) << "nobody";
  for (const char* bad :
       {"10.0.0.0/33", "::1/129", "example.com", "10.0.0.0/x", "1.2.3"}) {
    const auto r = TrustedProxies::Parse(bad);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_THAT(std::string(r.status().message()),
                HasSubstr("--trusted_proxies"));
  }
  EXPECT_EQ(TrustedProxies::AddressOfGrpcPeer("ipv4:127.0.0.1:5000"),
            "127.0.0.1");
  EXPECT_EQ(TrustedProxies::AddressOfGrpcPeer("ipv6:[::1]:5000"), "::1");
  // As gRPC 1.47 and later write it (a URI, brackets percent-encoded).
  EXPECT_EQ(TrustedProxies::AddressOfGrpcPeer("ipv6:%5B::1%5D:5000"), "::1");
  EXPECT_EQ(TrustedProxies::AddressOfGrpcPeer("ipv6:%5b::ffff:127.0.0.1%5d:5"),
            "::ffff:127.0.0.1");
  EXPECT_TRUE(TrustedProxies::Parse(TrustedProxies::kLoopback)
                  ->Trusts(TrustedProxies::AddressOfGrpcPeer(
                      "ipv6:%5B::1%5D:5000")));
  EXPECT_EQ(TrustedProxies::AddressOfGrpcPeer("unix:/tmp/s"), "");
}

TEST(TenantPolicy, TheCertificateElseATrustedProxysLastValueElseDefault) {
  TenantPolicy policy;  // loopback trusted
  EXPECT_EQ(policy.Resolve("CN=acme", "10.0.0.1", {"other"}), "CN=acme");
  EXPECT_EQ(policy.Resolve("", "127.0.0.1", {"client", "proxy"}), "proxy");
  EXPECT_EQ(policy.Resolve("", "10.0.0.1", {"client"}), "default");
  EXPECT_EQ(policy.Resolve("", "127.0.0.1", {}), "default");
  EXPECT_EQ(policy.Resolve("", "127.0.0.1", {" "}), "default");
}

TEST(TenantPolicy, StreamsAreInteractiveOnlyForListedTenants) {
  TenantPolicy everyone;
  EXPECT_EQ(everyone.ManyPriority(vin::v1::PRIORITY_INTERACTIVE, "x"),
            domain::Priority::kInteractive);
  TenantPolicy listed;
  listed.interactive_tenants.emplace();
  listed.interactive_tenants->insert("acme");
  EXPECT_EQ(listed.ManyPriority(vin::v1::PRIORITY_INTERACTIVE, "acme"),
            domain::Priority::kInteractive);
  EXPECT_EQ(listed.ManyPriority(vin::v1::PRIORITY_INTERACTIVE, "beta"),
            domain::Priority::kBulk);
  EXPECT_EQ(listed.ManyPriority(vin::v1::PRIORITY_UNSPECIFIED, "acme"),
            domain::Priority::kBulk);
}

TEST(Tenant, NamesWithCommasAreQuoted) {
  auto list =
      ParseTenantList("\"CN=acme,O=Acme Inc\", beta ,\"say \"\"hi\"\"\"",
                      "--interactive_tenants");
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(*list, (std::vector<std::string>{"CN=acme,O=Acme Inc", "beta",
                                             "say \"hi\""}));
  EXPECT_THAT(
      ParseTenantList("\"open", "--interactive_tenants").status().message(),
      HasSubstr("no closing quote"));
  EXPECT_THAT(
      ParseTenantList("\"a\"b", "--interactive_tenants").status().message(),
      HasSubstr("not a tenant name"));
  auto w = ParseTenantWeights("\"CN=acme,O=Acme\":2, beta:0.5,\"x:y\":3");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->at("CN=acme,O=Acme"), 2);
  EXPECT_EQ(w->at("beta"), 0.5);
  EXPECT_EQ(w->at("x:y"), 3);
  EXPECT_FALSE(ParseTenantWeights("\"CN=a,O=b\"").ok())
      << "a name without a weight";
}

TEST(Tenant, MetricsNameAtMostMaxTenantsAndTheRestAreOther) {
  metrics::ServiceMetrics m;
  m.upstream_tenant_vins.SetMaxTenants(2);
  m.upstream_tenant_vins.Add("a", 0, 3);
  m.upstream_tenant_vins.Add("b", 1, 2);
  m.upstream_tenant_vins.Add("c", 1, 5);
  m.upstream_tenant_vins.Add("d", 0, 1);
  m.upstream_tenant_vins.Add("a", 1, 1);
  const auto rows = m.upstream_tenant_vins.Read();
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].tenant, "a");
  EXPECT_EQ(rows[0].vins[0], 3u);
  EXPECT_EQ(rows[0].vins[1], 1u);
  EXPECT_EQ(rows[2].tenant, "other");
  EXPECT_EQ(rows[2].vins[1], 5u);
  EXPECT_EQ(rows[2].vins[0], 1u);
}

}  // namespace
}  // namespace server

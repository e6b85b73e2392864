// Who asks (rule 17): tenants from headers, priorities from the API,
// --tenant_weights, and the bound on tenants named in metrics.
#include "server/tenant.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "metrics/metrics.h"

namespace server {
namespace {

using testing::HasSubstr;

TEST(Tenant, AHeaderNamesItTrimmedAndCutAndBlankIsDefault) {
  EXPECT_EQ(TenantFromHeader("  acme "), "acme");
  EXPECT_EQ(TenantFromHeader(""), "default");
  EXPECT_EQ(TenantFromHeader("   "), "default");
  EXPECT_EQ(TenantFromHeader(std::string(500, 'x')).size(), domain::kMaxTenantBytes);
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

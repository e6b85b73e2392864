// Rule 21: every live vPIC answer is compared with the snapshot's decode of
// the same VIN, per variable. A fake vPIC answers the captured fixture, or
// the fixture with one variable changed; the counts per variable and
// outcome are exact, the disagreements listed hold both values, the
// snapshot's health flips below --parity_min and back above it, and only
// operators read the report (gRPC and GET /v1/parity).
#include <grpcpp/grpcpp.h>

#include "absl/strings/match.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "gtest/gtest.h"
#include "testing/http_client.h"
#include "testing/server_fixture.h"
#include "vin/v1/admin.grpc.pb.h"

namespace {

using server::ServerOptions;

constexpr char kVin[] = "1FTMW1T88MFA00001";  // the captured fixture's

class ParityTest : public testing_util::ServerFixture {
 protected:
  // Every decode live (no cache), compared with the snapshot.
  static ServerOptions WithSnapshot(int window, double min) {
    ServerOptions o = Defaults();
    o.snapshot_path = VIN_SNAPSHOT_PATH;
    o.engine.cache_capacity = 0;
    // Each scripted answer is one request: no attempt may time out and be
    // tried again on a loaded machine (it would take the next answer).
    o.engine.attempt_timeout = absl::Seconds(60);
    o.parity.window = window;
    o.parity.min = min;
    // The pinned snapshot's data is older than the default age limit: its
    // health here answers to parity alone.
    o.snapshot_max_age = absl::Hours(24 * 365 * 10);
    o.http.listen = "127.0.0.1:0";
    return o;
  }

  void DecodeLive(int times) {
    for (int i = 0; i < times; ++i) {
      vin::v1::DecodeRequest req;
      req.set_vin(kVin);
      req.set_source_preference(vin::v1::SOURCE_PREFERENCE_LIVE_ONLY);
      vin::v1::DecodeResponse resp;
      const grpc::Status s = Decode(req, &resp);
      ASSERT_TRUE(s.ok()) << s.error_message();
      ASSERT_EQ(resp.result().source(), vin::v1::SOURCE_VPIC);
    }
    server_->parity()->Flush();
  }

  grpc::Status GetParity(vin::v1::ParityReport* report,
                         const std::string& tenant = "") {
    auto stub = vin::v1::VinAdminService::NewStub(channel_);
    grpc::ClientContext ctx;
    if (!tenant.empty()) ctx.AddMetadata("x-vin-tenant", tenant);
    return stub->GetParity(&ctx, vin::v1::GetParityRequest(), report);
  }

  const vin::v1::VariableParity* Find(const vin::v1::ParityReport& r,
                                      const std::string& name) {
    for (const auto& v : r.variables()) {
      if (v.variable() == name) return &v;
    }
    return nullptr;
  }

  grpc::health::v1::HealthCheckResponse::ServingStatus SnapshotHealth() {
    auto stub = grpc::health::v1::Health::NewStub(channel_);
    grpc::ClientContext ctx;
    grpc::health::v1::HealthCheckRequest req;
    req.set_service("vin.v1.VinDecoderService.snapshot");
    grpc::health::v1::HealthCheckResponse resp;
    EXPECT_TRUE(stub->Check(&ctx, req, &resp).ok());
    return resp.status();
  }
};

TEST_F(ParityTest, CountsPerVariableAndOutcomeAreExact) {
  StartServer(WithSnapshot(1000, 0.97));
  // Two answers as captured, one with another model, one without a model.
  Script(kVin, "ok,set:Model=F-550,set:Model=,ok");
  DecodeLive(4);
  vin::v1::ParityReport report;
  ASSERT_TRUE(GetParity(&report).ok());
  EXPECT_EQ(report.compared(), 4);
  EXPECT_EQ(report.snapshot_sha256().size(), 64u);
  const vin::v1::VariableParity* model = Find(report, "Model");
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->agree(), 2) << model->DebugString();
  EXPECT_EQ(model->differ(), 1);
  EXPECT_EQ(model->live_missing(), 1);
  EXPECT_EQ(model->snapshot_missing(), 0);
  // The disagreements, newest first, with both values.
  ASSERT_EQ(model->examples_size(), 2);
  EXPECT_EQ(model->examples(0).vin(), kVin);
  EXPECT_EQ(model->examples(0).live(), "");
  EXPECT_EQ(model->examples(1).live(), "F-550");
  const std::string snapshot_model = model->examples(1).snapshot();
  EXPECT_FALSE(snapshot_model.empty());
  EXPECT_EQ(model->examples(0).snapshot(), snapshot_model);
  // Every other variable was compared the same way four times.
  int variables = 0;
  for (const auto& v : report.variables()) {
    ++variables;
    EXPECT_EQ(v.agree() + v.differ() + v.live_missing() + v.snapshot_missing(),
              4)
        << v.DebugString();
    if (v.variable() == "Model") continue;
    EXPECT_TRUE(v.agree() == 4 || v.differ() == 4 || v.live_missing() == 4 ||
                v.snapshot_missing() == 4)
        << v.DebugString();
  }
  EXPECT_GT(variables, 10);
  // Make, model and year agree in 3 of 4: a model vPIC does not give is
  // not held against the snapshot.
  EXPECT_DOUBLE_EQ(report.make_model_year_agreement(), 0.75);
  // The same report over HTTP.
  const testing_util::HttpResponse http =
      testing_util::HttpGet(server_->http_port(), "/v1/parity");
  EXPECT_EQ(http.status, 200) << http.body;
  EXPECT_TRUE(absl::StrContains(http.body, "\"compared\":\"4\"")) << http.body;
}

TEST_F(ParityTest, TheSnapshotsHealthFollowsTheAgreement) {
  // Judged over the last 4 compared answers; at least 3 must agree.
  StartServer(WithSnapshot(4, 0.75));
  DecodeLive(4);
  EXPECT_EQ(SnapshotHealth(), grpc::health::v1::HealthCheckResponse::SERVING);
  Script(kVin, "set:Model=F-550,set:ModelYear=1991");
  DecodeLive(2);  // 2 of the last 4 agree
  vin::v1::ParityReport low;
  ASSERT_TRUE(GetParity(&low).ok());
  EXPECT_EQ(SnapshotHealth(),
            grpc::health::v1::HealthCheckResponse::NOT_SERVING)
      << low.DebugString();
  // Its answers are still given, labelled.
  vin::v1::DecodeRequest req;
  req.set_vin(kVin);
  req.set_source_preference(vin::v1::SOURCE_PREFERENCE_SNAPSHOT_ONLY);
  vin::v1::DecodeResponse resp;
  ASSERT_TRUE(Decode(req, &resp).ok());
  EXPECT_EQ(resp.result().source(), vin::v1::SOURCE_SNAPSHOT);
  DecodeLive(4);  // back to 4 of 4
  EXPECT_EQ(SnapshotHealth(), grpc::health::v1::HealthCheckResponse::SERVING);
  vin::v1::ParityReport report;
  ASSERT_TRUE(GetParity(&report).ok());
  const vin::v1::VariableParity* year = Find(report, "ModelYear");
  ASSERT_NE(year, nullptr);
  ASSERT_EQ(year->examples_size(), 1);
  EXPECT_EQ(year->examples(0).live(), "1991");
}

TEST_F(ParityTest, OnlyOperatorsReadIt) {
  ServerOptions o = WithSnapshot(1000, 0.97);
  o.admins.tenants = {"ops"};
  StartServer(o);
  DecodeLive(1);
  vin::v1::ParityReport report;
  // A tenant named by a trusted proxy (loopback) is not a local operator.
  grpc::Status s = GetParity(&report, "acme");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_TRUE(absl::StrContains(s.error_details(), "ADMIN_ONLY"));
  EXPECT_TRUE(GetParity(&report, "ops").ok());
  EXPECT_EQ(report.compared(), 1);
  const int port = server_->http_port();
  const testing_util::HttpResponse refused =
      testing_util::HttpGet(port, "/v1/parity", {"X-Vin-Tenant: acme"});
  EXPECT_EQ(refused.status, 403);
  EXPECT_TRUE(absl::StrContains(refused.body, "ADMIN_ONLY")) << refused.body;
  EXPECT_EQ(
      testing_util::HttpGet(port, "/v1/parity", {"X-Vin-Tenant: ops"}).status,
      200);
  EXPECT_EQ(testing_util::HttpCall(port, "POST", "/v1/parity", "").status, 405);
}

}  // namespace

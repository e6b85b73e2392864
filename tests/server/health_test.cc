#include <grpcpp/create_channel.h>

#include <thread>

#include "grpc/health/v1/health.grpc.pb.h"
#include "gtest/gtest.h"
#include "snapshot/test_snapshot.h"
#include "testing/server_fixture.h"

namespace {

using grpc::health::v1::Health;
using grpc::health::v1::HealthCheckRequest;
using grpc::health::v1::HealthCheckResponse;

class HealthTest : public testing_util::ServerFixture {
 protected:
  grpc::Status Check(const std::string& service, HealthCheckResponse* resp) {
    auto stub = Health::NewStub(channel_);
    grpc::ClientContext ctx;
    HealthCheckRequest req;
    req.set_service(service);
    return stub->Check(&ctx, req, resp);
  }
};

TEST_F(HealthTest, ServingForTheServerAndTheService) {
  StartServer();
  for (const char* name : {"", "vin.v1.VinDecoderService"}) {
    HealthCheckResponse resp;
    ASSERT_TRUE(Check(name, &resp).ok()) << name;
    EXPECT_EQ(resp.status(), HealthCheckResponse::SERVING) << name;
  }
}

TEST_F(HealthTest, UnknownServiceIsNotFound) {
  StartServer();
  HealthCheckResponse resp;
  EXPECT_EQ(Check("no.such.Service", &resp).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_F(HealthTest, WatchStreamsTheChangeAtShutdownThenEnds) {
  StartServer();
  auto stub = Health::NewStub(channel_);
  grpc::ClientContext ctx;
  HealthCheckRequest req;
  req.set_service("vin.v1.VinDecoderService");
  auto watch = stub->Watch(&ctx, req);
  HealthCheckResponse resp;
  ASSERT_TRUE(watch->Read(&resp));
  EXPECT_EQ(resp.status(), HealthCheckResponse::SERVING);
  std::thread stop([this] { server_->Shutdown(absl::Seconds(10)); });
  ASSERT_TRUE(watch->Read(&resp));
  EXPECT_EQ(resp.status(), HealthCheckResponse::NOT_SERVING);
  EXPECT_FALSE(watch->Read(&resp));
  EXPECT_EQ(watch->Finish().error_code(), grpc::StatusCode::UNAVAILABLE);
  stop.join();
}

TEST_F(HealthTest, WatchOfAnUnknownServiceSaysSo) {
  StartServer();
  auto stub = Health::NewStub(channel_);
  grpc::ClientContext ctx;
  HealthCheckRequest req;
  req.set_service("no.such.Service");
  auto watch = stub->Watch(&ctx, req);
  HealthCheckResponse resp;
  ASSERT_TRUE(watch->Read(&resp));
  EXPECT_EQ(resp.status(), HealthCheckResponse::SERVICE_UNKNOWN);
  ctx.TryCancel();
}

TEST_F(HealthTest, SnapshotIsNotServingWithoutOne) {
  StartServer();
  HealthCheckResponse resp;
  ASSERT_TRUE(Check("vin.v1.VinDecoderService.snapshot", &resp).ok());
  EXPECT_EQ(resp.status(), HealthCheckResponse::NOT_SERVING);
}

TEST_F(HealthTest, SnapshotIsServingOnlyWhileItsDataIsYoungEnough) {
  SKIP_WITHOUT_SNAPSHOT();
  auto snap = snapshot::testing::SharedSnapshot();
  ASSERT_NE(snap, nullptr);
  absl::Time data_time;
  std::string err;
  ASSERT_TRUE(absl::ParseTime("%Y-%m-%d", snap->info().date,
                              absl::UTCTimeZone(), &data_time, &err));
  const absl::Duration age = absl::Now() - data_time;
  // Young enough for another second, then stale: a Watch sees the change.
  server::ServerOptions o = Defaults();
  o.snapshot_path = snapshot::testing::SnapshotPath();
  o.snapshot_max_age = age + absl::Seconds(2);
  StartServer(o);
  HealthCheckResponse resp;
  ASSERT_TRUE(Check("vin.v1.VinDecoderService.snapshot", &resp).ok());
  EXPECT_EQ(resp.status(), HealthCheckResponse::SERVING);
  auto stub = Health::NewStub(channel_);
  grpc::ClientContext ctx;
  HealthCheckRequest req;
  req.set_service("vin.v1.VinDecoderService.snapshot");
  auto watch = stub->Watch(&ctx, req);
  ASSERT_TRUE(watch->Read(&resp));
  EXPECT_EQ(resp.status(), HealthCheckResponse::SERVING);
  ASSERT_TRUE(watch->Read(&resp)) << "told when the data grows stale";
  EXPECT_EQ(resp.status(), HealthCheckResponse::NOT_SERVING);
  ASSERT_TRUE(Check("vin.v1.VinDecoderService", &resp).ok());
  EXPECT_EQ(resp.status(), HealthCheckResponse::SERVING)
      << "the service itself still serves (live decodes)";
  ctx.TryCancel();
}

}  // namespace

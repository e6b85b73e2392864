#include <grpcpp/create_channel.h>

#include <grpcpp/server_builder.h>

#include <thread>

#include "absl/strings/str_cat.h"
#include "server/health_service.h"

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

  // A Watch of `service`, and the next status it streams.
  struct Watcher {
    std::unique_ptr<Health::Stub> stub;
    grpc::ClientContext ctx;
    std::unique_ptr<grpc::ClientReader<HealthCheckResponse>> stream;
    // The next status, or UNKNOWN when the stream ended.
    HealthCheckResponse::ServingStatus Next() {
      HealthCheckResponse resp;
      return stream->Read(&resp) ? resp.status() : HealthCheckResponse::UNKNOWN;
    }
  };
  std::unique_ptr<Watcher> Watch(const std::string& service) {
    auto w = std::make_unique<Watcher>();
    w->stub = Health::NewStub(channel_);
    HealthCheckRequest req;
    req.set_service(service);
    w->stream = w->stub->Watch(&w->ctx, req);
    return w;
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
  auto watch = Watch("vin.v1.VinDecoderService");
  EXPECT_EQ(watch->Next(), HealthCheckResponse::SERVING);
  std::thread stop([this] { server_->Shutdown(absl::Seconds(10)); });
  EXPECT_EQ(watch->Next(), HealthCheckResponse::NOT_SERVING);
  EXPECT_EQ(watch->Next(), HealthCheckResponse::UNKNOWN) << "then it ends";
  EXPECT_EQ(watch->stream->Finish().error_code(), grpc::StatusCode::UNAVAILABLE);
  stop.join();
}

TEST_F(HealthTest, WatchOfAnUnknownServiceSaysSo) {
  StartServer();
  auto watch = Watch("no.such.Service");
  EXPECT_EQ(watch->Next(), HealthCheckResponse::SERVICE_UNKNOWN);
  watch->ctx.TryCancel();
}

TEST_F(HealthTest, SnapshotIsNotServingWithoutOne) {
  StartServer();
  HealthCheckResponse resp;
  ASSERT_TRUE(Check("vin.v1.VinDecoderService.snapshot", &resp).ok());
  EXPECT_EQ(resp.status(), HealthCheckResponse::NOT_SERVING);
}

TEST_F(HealthTest, SnapshotHealthFollowsTheDataAge) {
  SKIP_WITHOUT_SNAPSHOT();
  server::ServerOptions o = Defaults();
  o.snapshot_path = snapshot::testing::SnapshotPath();
  o.snapshot_max_age = absl::Hours(24 * 365 * 100);
  StartServer(o);
  HealthCheckResponse resp;
  ASSERT_TRUE(Check("vin.v1.VinDecoderService.snapshot", &resp).ok());
  EXPECT_EQ(resp.status(), HealthCheckResponse::SERVING) << "young enough";
  TearDown();
  SetUp();
  o.snapshot_max_age = absl::Hours(24);  // the snapshot is older than a day
  StartServer(o);
  ASSERT_TRUE(Check("vin.v1.VinDecoderService.snapshot", &resp).ok());
  EXPECT_EQ(resp.status(), HealthCheckResponse::NOT_SERVING) << "stale";
  ASSERT_TRUE(Check("vin.v1.VinDecoderService", &resp).ok());
  EXPECT_EQ(resp.status(), HealthCheckResponse::SERVING)
      << "the service itself still serves (live decodes)";
}

// The health service alone, on a server of its own, with a snapshot date
// the test sets: a Watch is told when the data grows stale.
TEST(HealthServiceTest, AWatchIsToldWhenTheSnapshotGrowsStale) {
  server::HealthService health(absl::Seconds(2));
  health.SetSnapshot(absl::Now() - absl::Seconds(1));  // stale in ~1 s
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                           &port);
  builder.RegisterService(&health);
  auto grpc_server = builder.BuildAndStart();
  auto stub = Health::NewStub(grpc::CreateChannel(
      absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  HealthCheckRequest req;
  req.set_service("vin.v1.VinDecoderService.snapshot");
  auto watch = stub->Watch(&ctx, req);
  HealthCheckResponse resp;
  ASSERT_TRUE(watch->Read(&resp));
  EXPECT_EQ(resp.status(), HealthCheckResponse::SERVING);
  ASSERT_TRUE(watch->Read(&resp)) << "told when the data grows stale";
  EXPECT_EQ(resp.status(), HealthCheckResponse::NOT_SERVING);
  health.SetSnapshot(absl::Now());  // a reload of fresh data
  ASSERT_TRUE(watch->Read(&resp));
  EXPECT_EQ(resp.status(), HealthCheckResponse::SERVING);
  ctx.TryCancel();
  grpc_server->Shutdown();
}

}  // namespace

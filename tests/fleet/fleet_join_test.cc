// DESIGN rule 16: a replica started with --redis_url joins its fleet before
// it serves. Until Redis has answered (at most --redis_connect_timeout)
// health is NOT_SERVING and decode calls are held, not failed; then it
// serves, alone if Redis never answered, and joins when Redis comes.
// A paused redis-server (SIGSTOP: the kernel still accepts connections,
// Redis answers nothing) holds a replica in that window for as long as a
// test needs. The fixture is in fleet_test_fixture.h.
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <signal.h>

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "fleet_test_fixture.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "gtest/gtest.h"
#include "testing/scrape.h"
#include "testing/subprocess.h"
#include "testing/vin_gen.h"
#include "vin/v1/vin.grpc.pb.h"

namespace fleet_test {
namespace {

using grpc::health::v1::Health;
using grpc::health::v1::HealthCheckRequest;
using grpc::health::v1::HealthCheckResponse;
using testing_util::ValidVin;

constexpr char kService[] = "vin.v1.VinDecoderService";

std::shared_ptr<grpc::Channel> ChannelTo(int port) {
  return grpc::CreateChannel(absl::StrCat("127.0.0.1:", port),
                             grpc::InsecureChannelCredentials());
}

HealthCheckResponse::ServingStatus CheckHealth(int port,
                                               const std::string& service) {
  auto stub = Health::NewStub(ChannelTo(port));
  grpc::ClientContext ctx;
  HealthCheckRequest req;
  req.set_service(service);
  HealthCheckResponse resp;
  if (!stub->Check(&ctx, req, &resp).ok()) return HealthCheckResponse::UNKNOWN;
  return resp.status();
}

// A Watch of `service`, and the statuses it streams.
struct Watcher {
  Watcher(int port, const std::string& service)
      : stub(Health::NewStub(ChannelTo(port))) {
    HealthCheckRequest req;
    req.set_service(service);
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(60)));
    stream = stub->Watch(&ctx, req);
  }
  // The next status, or UNKNOWN when the stream ended.
  HealthCheckResponse::ServingStatus Next() {
    HealthCheckResponse resp;
    return stream->Read(&resp) ? resp.status() : HealthCheckResponse::UNKNOWN;
  }
  std::unique_ptr<Health::Stub> stub;
  grpc::ClientContext ctx;
  std::unique_ptr<grpc::ClientReader<HealthCheckResponse>> stream;
};

class FleetJoinTest : public FleetTest {
 protected:
  size_t Held() const {
    size_t n = 0;
    for (const auto& s : servers_) n += s->calls_held();
    return n;
  }
};

TEST_F(FleetJoinTest, NotServingAndCallsHeldUntilRedisAnswers) {
  redis_.Pause();  // accepts connections, answers nothing
  server::ServerOptions o = Defaults();
  o.fleet.connect_timeout = absl::Seconds(60);
  LaunchReplicas(o, 1);
  const int port = servers_[0]->port();
  Watcher whole(port, ""), service(port, kService);
  EXPECT_EQ(whole.Next(), HealthCheckResponse::NOT_SERVING);
  EXPECT_EQ(service.Next(), HealthCheckResponse::NOT_SERVING);
  Calls calls;
  calls.Start(stubs_[0].get(), ValidVin(101));
  ASSERT_TRUE(testing_util::Eventually([&] { return Held() == 1; }))
      << "the call is held";
  EXPECT_EQ(servers_[0]->engine().Stats().waiters, 0u)
      << "a held call has not reached the engine";
  EXPECT_EQ(fake_->TotalRequests(), 0);
  EXPECT_EQ(CheckHealth(port, kService), HealthCheckResponse::NOT_SERVING)
      << "a port that accepts is not a Redis that answers";
  EXPECT_EQ(servers_[0]->metrics().redis_up.value(), 0);

  const absl::Time resumed = absl::Now();
  redis_.Resume();
  EXPECT_EQ(whole.Next(), HealthCheckResponse::SERVING);
  EXPECT_EQ(service.Next(), HealthCheckResponse::SERVING);
  std::cout << "SERVING " << absl::FormatDuration(absl::Now() - resumed)
            << " after Redis resumed" << std::endl;
  ASSERT_TRUE(calls.Wait());
  const auto* call = calls.calls()[0];
  ASSERT_TRUE(call->status.ok()) << call->status.error_message();
  EXPECT_EQ(call->resp.result().source(), vin::v1::SOURCE_VPIC);
  EXPECT_EQ(servers_[0]->metrics().redis_up.value(), 1);
  EXPECT_EQ(Held(), 0u);
}

// Three replicas started together, called at once with the same VINs
// before any has reached Redis: one upstream request per VIN (without the
// hold each would decode alone: three per VIN).
TEST_F(FleetJoinTest, ThreeReplicasCalledBeforeTheyJoinSendOneRequestPerVin) {
  constexpr int kVins = 10;
  redis_.Pause();
  server::ServerOptions o = Defaults();
  o.fleet.connect_timeout = absl::Seconds(60);
  LaunchReplicas(o, kReplicas);
  Calls calls;
  for (int v = 0; v < kVins; ++v) {
    for (int r = 0; r < kReplicas; ++r) {
      calls.Start(stubs_[r].get(), ValidVin(200 + v));
      calls.Start(stubs_[r].get(), ValidVin(200 + v));
    }
  }
  ASSERT_TRUE(testing_util::Eventually([&] {
    return Held() == 2 * kVins * kReplicas;
  })) << "held: "
      << Held();
  for (const auto& s : servers_) {
    EXPECT_EQ(CheckHealth(s->port(), ""), HealthCheckResponse::NOT_SERVING);
  }
  EXPECT_EQ(fake_->TotalRequests(), 0);
  redis_.Resume();
  ASSERT_TRUE(calls.Wait());
  for (const auto* c : calls.calls()) {
    EXPECT_TRUE(c->status.ok()) << c->status.error_message();
  }
  for (int v = 0; v < kVins; ++v) {
    EXPECT_EQ(fake_->RequestCount(ValidVin(200 + v)), 1) << ValidVin(200 + v);
  }
  EXPECT_EQ(fake_->TotalRequests(), kVins);
}

// The same with Redis up, as a fleet is started: calls sent the moment the
// ports open. Also how long a replica takes to serve.
TEST_F(FleetJoinTest,
       ThreeReplicasStartedTogetherWithRedisUpSendOneRequestPerVin) {
  constexpr int kVins = 10;
  const absl::Time start = absl::Now();
  LaunchReplicas(Defaults(), kReplicas);
  Calls calls;
  for (int v = 0; v < kVins; ++v) {
    for (int r = 0; r < kReplicas; ++r)
      calls.Start(stubs_[r].get(), ValidVin(300 + v));
  }
  for (const auto& s : servers_) {
    Watcher w(s->port(), "");
    HealthCheckResponse::ServingStatus st = w.Next();
    if (st == HealthCheckResponse::NOT_SERVING) st = w.Next();
    EXPECT_EQ(st, HealthCheckResponse::SERVING);
  }
  std::cout << "three replicas SERVING "
            << absl::FormatDuration(absl::Now() - start)
            << " after the first Start()" << std::endl;
  ASSERT_TRUE(calls.Wait());
  for (const auto* c : calls.calls()) {
    EXPECT_TRUE(c->status.ok()) << c->status.error_message();
  }
  for (int v = 0; v < kVins; ++v) {
    EXPECT_EQ(fake_->RequestCount(ValidVin(300 + v)), 1) << ValidVin(300 + v);
  }
}

// Nothing listens on the Redis port: SERVING after the connect timeout, in
// local mode (vin_redis_up 0); Redis started later on that port is joined
// without a restart: what the replica decodes then, another replica
// answers from the fleet's cache.
TEST_F(FleetJoinTest, WithoutRedisItServesAloneAfterTheTimeoutThenJoins) {
  ASSERT_TRUE(redis_.Stop());  // its port is free now
  server::ServerOptions o = Defaults();
  o.fleet.connect_timeout = absl::Milliseconds(300);
  o.metrics_listen = "127.0.0.1:0";
  const absl::Time start = absl::Now();
  LaunchReplicas(o, 1);
  Watcher w(servers_[0]->port(), "");
  EXPECT_EQ(w.Next(), HealthCheckResponse::NOT_SERVING);
  EXPECT_EQ(w.Next(), HealthCheckResponse::SERVING);
  const absl::Duration took = absl::Now() - start;
  std::cout << "SERVING in local mode after " << absl::FormatDuration(took)
            << std::endl;
  EXPECT_GE(took, o.fleet.connect_timeout);
  std::string body;
  ASSERT_EQ(
      testing_util::HttpGet(servers_[0]->metrics_port(), "/metrics", &body),
      200);
  EXPECT_EQ(testing_util::ParseSamples(body).at("vin_redis_up"), 0);
  vin::v1::DecodeResponse alone;
  ASSERT_TRUE(Decode(0, ValidVin(401), &alone).ok());
  EXPECT_EQ(alone.result().source(), vin::v1::SOURCE_VPIC);

  std::string error;
  ASSERT_TRUE(redis_.Start(&error)) << error;
  ASSERT_TRUE(testing_util::Eventually([&] {
    return servers_[0]->metrics().redis_up.value() == 1;
  })) << "joined once Redis answers";
  LaunchReplicas(Defaults(), 1);  // a second replica, to read the fleet's cache
  ASSERT_TRUE(testing_util::Eventually(
      [&] { return servers_[1]->metrics().redis_up.value() == 1; }));
  vin::v1::DecodeResponse a, b;
  ASSERT_TRUE(Decode(0, ValidVin(402), &a).ok());
  ASSERT_TRUE(Decode(1, ValidVin(402), &b).ok());
  EXPECT_EQ(a.result().source(), vin::v1::SOURCE_VPIC);
  EXPECT_EQ(b.result().source(), vin::v1::SOURCE_CACHE)
      << "the first replica shares its decodes since it joined";
  EXPECT_EQ(fake_->RequestCount(ValidVin(402)), 1);
}

// What an operator reads: one warning naming Redis at the timeout (not a
// "redis is down" line while it waits), one line when it joins, and the
// metric.
TEST_F(FleetJoinTest, TheBinaryLogsLocalModeThenTheJoin) {
  ASSERT_TRUE(redis_.Stop());
  testing_util::Subprocess proc;
  ASSERT_TRUE(proc.Start(
      {VIN_SERVER_BIN, "--listen=127.0.0.1:0",
       "--vpic_base_url=" + fake_->base_url(), "--redis_url=" + redis_.url(),
       "--redis_connect_timeout=300ms", "--metrics_listen=127.0.0.1:0"}));
  auto warning = proc.WaitForLine(
      "did not answer within --redis_connect_timeout", absl::Seconds(20));
  ASSERT_TRUE(warning.has_value());
  EXPECT_NE(warning->find("warning"), std::string::npos) << *warning;
  EXPECT_NE(warning->find("redis=" + redis_.url()), std::string::npos)
      << *warning;
  EXPECT_FALSE(
      proc.WaitForLine("redis is down", absl::ZeroDuration()).has_value())
      << "the wait says nothing until its own line";
  auto metrics = proc.WaitForLine("metrics on", absl::Seconds(20));
  ASSERT_TRUE(metrics.has_value());
  const int metrics_port = PortIn(*metrics);
  auto redis_up = [&] {
    return testing_util::MetricAt(metrics_port, "vin_redis_up");
  };
  EXPECT_EQ(redis_up(), 0);
  std::string error;
  ASSERT_TRUE(redis_.Start(&error)) << error;
  auto joined =
      proc.WaitForLine("redis answered: joined the fleet", absl::Seconds(20));
  ASSERT_TRUE(joined.has_value());
  EXPECT_NE(joined->find("redis=" + redis_.url()), std::string::npos)
      << *joined;
  EXPECT_EQ(redis_up(), 1);
  proc.Signal(SIGTERM);
  EXPECT_EQ(proc.Wait(absl::Seconds(20)), 0);
}

// SIGTERM while the replica still waits for Redis: a call held then gets
// its answer, and the process exits 0 at once, not after the timeout.
TEST_F(FleetJoinTest, SigtermWhileWaitingForRedisExitsCleanly) {
  redis_.Pause();
  testing_util::Subprocess proc;
  ASSERT_TRUE(proc.Start({VIN_SERVER_BIN, "--listen=127.0.0.1:0",
                          "--vpic_base_url=" + fake_->base_url(),
                          "--redis_url=" + redis_.url(),
                          "--redis_connect_timeout=60s", "--log_level=debug"}));
  auto listening = proc.WaitForLine("listening on", absl::Seconds(20));
  ASSERT_TRUE(listening.has_value());
  const int port = PortIn(*listening);
  Watcher w(port, "");
  ASSERT_EQ(w.Next(), HealthCheckResponse::NOT_SERVING);
  auto stub = vin::v1::VinDecoderService::NewStub(ChannelTo(port));
  Calls calls;
  calls.Start(stub.get(), ValidVin(501));
  // The call is held at the server (not still on its way) when the stop
  // comes: a call the server never saw would end CANCELLED.
  ASSERT_TRUE(proc.WaitForLine("decode call held until the replica joins",
                               absl::Seconds(20))
                  .has_value());
  const absl::Time signalled = absl::Now();
  proc.Signal(SIGTERM);
  EXPECT_EQ(proc.Wait(absl::Seconds(20)), 0);
  EXPECT_LT(absl::Now() - signalled, absl::Seconds(15)) << "not the 60 s wait";
  ASSERT_TRUE(calls.Wait());
  const grpc::Status& s = calls.calls()[0]->status;
  EXPECT_TRUE(s.ok() || s.error_code() == grpc::StatusCode::UNAVAILABLE)
      << s.error_code() << " " << s.error_message();
  EXPECT_TRUE(proc.WaitForLine("stopped", absl::Seconds(5)).has_value());
}

}  // namespace
}  // namespace fleet_test

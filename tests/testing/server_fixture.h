// An in-process vin-server on a loopback port in front of the fake vPIC,
// with a stub connected to it.
#ifndef VIN_TESTS_TESTING_SERVER_FIXTURE_H_
#define VIN_TESTS_TESTING_SERVER_FIXTURE_H_

#include <memory>
#include <string>
#include <vector>

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>

#include "absl/strings/str_cat.h"
#include "fake_vpic/fake_vpic.h"
#include "gtest/gtest.h"
#include "server/server.h"
#include "vin/v1/vin.grpc.pb.h"

namespace testing_util {

class ServerFixture : public testing::Test {
 protected:
  void SetUp() override {
    auto fake = fakevpic::FakeVpic::Start();
    ASSERT_TRUE(fake.ok()) << fake.status();
    fake_ = *std::move(fake);
  }
  void TearDown() override {
    server_.reset();
    fake_.reset();
  }

  // Starts the server; options.engine.vpic_base_url is set to the fake.
  void StartServer(server::ServerOptions options = Defaults()) {
    options.listen = "127.0.0.1:0";
    options.engine.vpic_base_url = fake_->base_url();
    auto s = server::VinServer::Start(std::move(options));
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = *std::move(s);
    channel_ = grpc::CreateChannel(absl::StrCat("127.0.0.1:", server_->port()),
                                   grpc::InsecureChannelCredentials());
    stub_ = vin::v1::VinDecoderService::NewStub(channel_);
  }

  // Short retry delays, no rate cap toward the fake and no batching, so that
  // a fault scripted for one VIN reaches that VIN alone (in a batch it would
  // fail the whole answer, for every VIN in it). The tests of the upstream
  // budget and of batching set their own; the retry budget is as in
  // production.
  static server::ServerOptions Defaults() {
    server::ServerOptions o;
    o.engine.retry_base = absl::Milliseconds(40);
    o.engine.retry_cap = absl::Milliseconds(400);
    o.engine.attempt_timeout = absl::Seconds(2);
    o.engine.budget.rate_per_minute = 0;
    o.engine.upstream_batch_max = 1;
    return o;
  }
  // Also every retry allowed: for tests of the per-flight rules (jitter,
  // stagger) that retry many flights at once.
  static server::ServerOptions OneRequestPerAttempt() {
    server::ServerOptions o = Defaults();
    o.engine.budget.retry_ratio = -1;
    return o;
  }

  void Script(const std::string& vin, const std::string& steps) {
    auto s = fakevpic::Step::ParseList(steps);
    ASSERT_TRUE(s.ok()) << s.status();
    fake_->Script(vin, *s);
  }

  grpc::Status Decode(const vin::v1::DecodeRequest& request,
                      vin::v1::DecodeResponse* response,
                      absl::Duration timeout = absl::Seconds(30)) {
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
    return stub_->Decode(&ctx, request, response);
  }
  grpc::Status Decode(const std::string& vin, vin::v1::DecodeResponse* response,
                      absl::Duration timeout = absl::Seconds(30)) {
    vin::v1::DecodeRequest request;
    request.set_vin(vin);
    return Decode(request, response, timeout);
  }

  std::unique_ptr<fakevpic::FakeVpic> fake_;
  std::unique_ptr<server::VinServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<vin::v1::VinDecoderService::Stub> stub_;
};

}  // namespace testing_util

#endif  // VIN_TESTS_TESTING_SERVER_FIXTURE_H_

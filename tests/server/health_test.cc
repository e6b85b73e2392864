#include <grpcpp/create_channel.h>

#include "grpc/health/v1/health.grpc.pb.h"
#include "gtest/gtest.h"
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

}  // namespace

// TLS and mutual TLS through real gRPC on loopback, with certificates made
// at test time; vinctl's credentials against them.
#include <grpcpp/create_channel.h>

#include <sstream>

#include "client/batch.h"
#include "client/credentials.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/server_fixture.h"
#include "testing/test_certs.h"

namespace {

using testing::HasSubstr;
using testing_util::MakeTestCerts;
using testing_util::TestCerts;

constexpr char kFord[] = "1FTMW1T88MFA00001";

class TlsTest : public testing_util::ServerFixture {
 protected:
  void SetUp() override {
    ServerFixture::SetUp();
    certs_ = MakeTestCerts();
    ASSERT_FALSE(certs_.ca.empty());
  }
  void TearDown() override {
    ServerFixture::TearDown();
    testing_util::RemoveTestCerts(certs_);
  }

  void StartTls(bool require_client_cert) {
    server::ServerOptions o = Defaults();
    o.tls.cert_file = certs_.server_cert;
    o.tls.key_file = certs_.server_key;
    if (require_client_cert) o.tls.client_ca_file = certs_.ca;
    StartServer(o);
  }

  // Decodes the Ford through a channel with `credentials`.
  grpc::Status DecodeWith(std::shared_ptr<grpc::ChannelCredentials> creds) {
    auto stub = vin::v1::VinDecoderService::NewStub(grpc::CreateChannel(
        absl::StrCat("127.0.0.1:", server_->port()), creds));
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
    vin::v1::DecodeRequest req;
    req.set_vin(kFord);
    vin::v1::DecodeResponse resp;
    return stub->Decode(&ctx, req, &resp);
  }

  std::shared_ptr<grpc::ChannelCredentials> Vinctl(vinctl::TlsOptions tls) {
    auto creds = vinctl::ChannelCredentialsFor(tls);
    EXPECT_TRUE(creds.ok()) << creds.status();
    return creds.ok() ? *creds : nullptr;
  }

  TestCerts certs_;
};

TEST_F(TlsTest, ServesTlsToClientsThatTrustItsCa) {
  StartTls(false);
  EXPECT_TRUE(DecodeWith(Vinctl({certs_.ca})).ok());
  EXPECT_EQ(DecodeWith(grpc::InsecureChannelCredentials()).error_code(),
            grpc::StatusCode::UNAVAILABLE)
      << "a plaintext client cannot talk to it";
  EXPECT_EQ(DecodeWith(Vinctl({certs_.other_ca})).error_code(),
            grpc::StatusCode::UNAVAILABLE)
      << "nor one that does not trust its certificate";
}

TEST_F(TlsTest, MutualTlsRequiresAClientCertificateFromTheCa) {
  StartTls(true);
  EXPECT_TRUE(
      DecodeWith(Vinctl({certs_.ca, certs_.client_cert, certs_.client_key}))
          .ok());
  EXPECT_EQ(DecodeWith(Vinctl({certs_.ca})).error_code(),
            grpc::StatusCode::UNAVAILABLE)
      << "no client certificate";
  EXPECT_EQ(DecodeWith(Vinctl({certs_.ca, certs_.other_client_cert,
                               certs_.other_client_key}))
                .error_code(),
            grpc::StatusCode::UNAVAILABLE)
      << "a certificate from another CA";
}

// Rule 17: under mutual TLS the tenant is the client certificate's
// subject, whatever header the client sends.
TEST_F(TlsTest, UnderMutualTlsTheTenantIsTheCertificatesSubject) {
  StartTls(true);
  auto stub = vin::v1::VinDecoderService::NewStub(grpc::CreateChannel(
      absl::StrCat("127.0.0.1:", server_->port()),
      Vinctl({certs_.ca, certs_.client_cert, certs_.client_key})));
  grpc::ClientContext ctx;
  ctx.AddMetadata("x-vin-tenant", "someone-else");
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(10)));
  vin::v1::DecodeRequest req;
  req.set_vin(kFord);
  vin::v1::DecodeResponse resp;
  ASSERT_TRUE(stub->Decode(&ctx, req, &resp).ok());
  const auto rows = server_->metrics().upstream_tenant_vins.Read();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].tenant, "CN=client");
  EXPECT_EQ(rows[0].vins[0], 1u) << "one interactive VIN";
}

TEST_F(TlsTest, VinctlBatchOverMutualTls) {
  StartTls(true);
  auto stub = vin::v1::VinDecoderService::NewStub(grpc::CreateChannel(
      absl::StrCat("127.0.0.1:", server_->port()),
      Vinctl({certs_.ca, certs_.client_cert, certs_.client_key})));
  std::istringstream in(absl::StrCat(kFord, "\n1HGCM82633A004352\n"));
  std::ostringstream out, progress;
  vinctl::BatchOptions options;
  options.deadline = absl::Seconds(30);
  auto summary = vinctl::RunBatch(options, stub.get(), in, out, progress);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->done, 2);
}

TEST_F(TlsTest, BadTlsSettingsAreClearErrors) {
  server::ServerOptions o = Defaults();
  o.listen = "127.0.0.1:0";
  o.engine.vpic_base_url = fake_->base_url();
  o.tls.cert_file = certs_.server_cert;
  auto s = server::VinServer::Start(o);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.status().message()), HasSubstr("--tls_key_file"));
  o.tls.key_file = certs_.dir + "/missing.key";
  s = server::VinServer::Start(o);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.status().message()), HasSubstr("missing.key"));
  auto creds = vinctl::ChannelCredentialsFor({"", certs_.client_cert, ""});
  ASSERT_FALSE(creds.ok());
  EXPECT_THAT(std::string(creds.status().message()), HasSubstr("--tls_key_file"));
}

}  // namespace

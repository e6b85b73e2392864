// TLS on every listener (DESIGN rule 19, README "TLS" and "Security"), on
// the real binary with certificates made at test time: the gateway answers
// https and nothing older than TLS 1.2, a plaintext request is told to use
// https and reaches nothing; under mutual TLS a client without a
// certificate from the CA is refused, and one with a certificate is the
// tenant its subject names, the same over HTTP and gRPC; the metrics leave
// loopback only over TLS or when the operator says so.
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "attack/attack_fixture.h"
#include "gmock/gmock.h"
#include "testing/eventually.h"
#include "testing/tls_client.h"
#include "testing/vin_gen.h"

namespace attack {
namespace {

using testing::HasSubstr;
using testing::Not;
using testing_util::HandshakeOptions;
using testing_util::HandshakeWith;
using testing_util::HttpCall;
using testing_util::HttpResponse;
using testing_util::TestCerts;
using testing_util::TlsClient;
using testing_util::ValidVin;

class AttackTlsTest : public AttackWithCertsTest {
 protected:
  // The gateway's TLS flags, then `more`.
  std::vector<std::string> HttpTls(std::vector<std::string> more = {}) const {
    std::vector<std::string> flags = {
        "--http_tls_cert_file=" + certs_.server_cert,
        "--http_tls_key_file=" + certs_.server_key};
    flags.insert(flags.end(), more.begin(), more.end());
    return flags;
  }
  HttpResponse Https(int port, const std::string& path, const TlsClient& tls,
                     const std::vector<std::string>& headers = {},
                     const std::string& method = "GET",
                     const std::string& body = "") {
    return HttpCall(port, method, path, body, headers, absl::Seconds(30), &tls);
  }
  static std::string Decode(const std::string& vin) {
    return absl::StrCat("/api/vehicles/DecodeVinValues/", vin, "?format=json");
  }
};

TEST_F(AttackTlsTest, TheGatewayAnswersHttpsAndRefusesPlaintextAndOldTls) {
  ASSERT_NO_FATAL_FAILURE(
      StartServer(HttpTls({"--tls_cert_file=" + certs_.server_cert,
                           "--tls_key_file=" + certs_.server_key,
                           "--metrics_tls_cert_file=" + certs_.server_cert,
                           "--metrics_tls_key_file=" + certs_.server_key})));
  const TlsClient client{certs_.ca, "", ""};
  const HttpResponse ok = Https(server_.http_port(), Decode(kFord), client);
  EXPECT_EQ(ok.status, 200) << ok.error;
  EXPECT_THAT(ok.body, HasSubstr("\"Results\""));

  // http:// to the https port: told so, and nothing runs.
  const HttpResponse plain =
      testing_util::HttpGet(server_.http_port(), Decode(ValidVin(11)));
  EXPECT_EQ(plain.status, 400);
  EXPECT_THAT(plain.body, HasSubstr("https://"));
  const HttpResponse metrics =
      Https(server_.metrics_port(), "/metrics", client);
  ASSERT_EQ(metrics.status, 200) << metrics.error;
  EXPECT_EQ(testing_util::Sum(testing_util::ParseSamples(metrics.body),
                              "vin_upstream_vins_total"),
            1)
      << "only the https request reached vPIC";

  // TLS 1.2 and later only, on every listener (gRPC's is gRPC's own
  // default; OpenSSL 3's default security level refuses older versions
  // too, the gateway's explicit floor is a second guard). The client's own
  // floor is lowered, so that a refusal is the server's.
  for (const int port :
       {server_.http_port(), server_.metrics_port(), server_.port()}) {
    HandshakeOptions old;
    old.alpn = port == server_.port() ? "h2" : "";
    old.security_level = 0;
    old.min_version = TLS1_VERSION;
    old.max_version = TLS1_1_VERSION;
    const auto tls11 = HandshakeWith(port, client, old);
    EXPECT_FALSE(tls11.ok) << "port " << port << " accepted TLS 1.1";
    old.max_version = TLS1_2_VERSION;
    const auto tls12 = HandshakeWith(port, client, old);
    EXPECT_TRUE(tls12.ok) << "port " << port << ": " << tls12.error;
    EXPECT_EQ(tls12.version, "TLSv1.2") << "port " << port;
    old.max_version = 0;
    EXPECT_EQ(HandshakeWith(port, client, old).version, "TLSv1.3")
        << "port " << port;
  }
}

// Over --http_max_connections a TLS connection is closed at once with
// nothing written (a plaintext 503 would be garbage to a TLS client, and a
// refusal is worth no handshake); the connections held are served.
TEST_F(AttackTlsTest, AConnectionOverTheCapIsClosedUnansweredOnTls) {
  ASSERT_NO_FATAL_FAILURE(StartServer(HttpTls({"--http_max_connections=2"})));
  const int port = server_.http_port();
  const int held[] = {testing_util::ConnectFrom(port, "127.0.0.1"),
                      testing_util::ConnectFrom(port, "127.0.0.1")};
  ASSERT_GE(held[0], 0);
  ASSERT_GE(held[1], 0);
  const TlsClient client{certs_.ca, "", ""};
  // Both are admitted (they hold the cap) before the third comes: a
  // refused handshake is the sign.
  testing_util::Eventually([&] { return !HandshakeWith(port, client).ok; },
                           absl::Seconds(10), absl::Milliseconds(20));
  const int third = testing_util::ConnectFrom(port, "127.0.0.1");
  ASSERT_GE(third, 0);
  char byte = 0;
  EXPECT_EQ(::recv(third, &byte, 1, 0), 0)
      << "closed with nothing written (-1: still open after 5 s)";
  ::close(third);
  const auto samples = Scrape();
  const auto refused =
      samples.find("vin_http_connections_refused_total{limit=\"global\"}");
  ASSERT_NE(refused, samples.end());
  EXPECT_GE(refused->second, 1);
  ::close(held[0]);
  // A place is free again: served over TLS.
  HttpResponse ok;
  testing_util::Eventually(
      [&] { return (ok = Https(port, Decode(kFord), client)).status == 200; },
      absl::Seconds(10), absl::Milliseconds(20));
  EXPECT_EQ(ok.status, 200) << ok.error;
  ::close(held[1]);
}

// The page's own origin is https:// under TLS; its http:// twin is another
// site (403), and the NDJSON stream, paced by a window of 4, runs over
// TLS as over TCP.
TEST_F(AttackTlsTest, OriginsAreHttpsAndTheStreamRunsOverTls) {
  ASSERT_NO_FATAL_FAILURE(StartServer(HttpTls({"--batch_window=4"})));
  const TlsClient client{certs_.ca, "", ""};
  const std::string own = absl::StrCat("127.0.0.1:", server_.http_port());
  EXPECT_EQ(Https(server_.http_port(), Decode(kFord), client,
                  {"Origin: https://" + own})
                .status,
            200);
  EXPECT_EQ(Https(server_.http_port(), Decode(kFord), client,
                  {"Origin: http://" + own})
                .status,
            403);

  constexpr int kItems = 60;
  std::string body;
  for (int i = 0; i < kItems; ++i) {
    absl::StrAppend(&body, "{\"vin\":\"", ValidVin(100 + i), "\"}\n");
  }
  const HttpResponse stream =
      Https(server_.http_port(), "/v1/decode:batch", client,
            {"Content-Type: application/x-ndjson"}, "POST", body);
  ASSERT_EQ(stream.status, 200) << stream.error;
  int done = 0;
  for (absl::string_view line : absl::StrSplit(stream.body, '\n')) {
    done += absl::StrContains(line, "\"done\"") ? 1 : 0;
  }
  EXPECT_EQ(done, kItems) << stream.body.substr(0, 2000);
}

// Under mutual TLS the client certificate is the tenant, whatever header
// the client sends, and one certificate names the same tenant over HTTP
// and gRPC (gRPC's subject form: RFC 2253, "CN=web,O=Acme\, Inc.,C=US").
TEST_F(AttackTlsTest, MutualTlsRefusesStrangersAndTheSubjectIsTheTenant) {
  ASSERT_NO_FATAL_FAILURE(
      StartServer(HttpTls({"--http_tls_client_ca_file=" + certs_.ca,
                           "--tls_cert_file=" + certs_.server_cert,
                           "--tls_key_file=" + certs_.server_key,
                           "--tls_client_ca_file=" + certs_.ca})));
  const int port = server_.http_port();
  const HttpResponse none =
      Https(port, Decode(ValidVin(21)), {certs_.ca, "", ""});
  EXPECT_EQ(none.status, 0) << "no client certificate: no answer";
  const HttpResponse stranger =
      Https(port, Decode(ValidVin(22)),
            {certs_.ca, certs_.other_client_cert, certs_.other_client_key});
  EXPECT_EQ(stranger.status, 0) << "a certificate from another CA";

  const TlsClient acme{certs_.ca, certs_.acme_cert, certs_.acme_key};
  const HttpResponse http =
      Https(port, Decode(ValidVin(23)), acme, {"x-vin-tenant: someone-else"});
  EXPECT_EQ(http.status, 200) << http.error;

  grpc::SslCredentialsOptions creds;
  creds.pem_root_certs = TestCerts::Read(certs_.ca);
  creds.pem_private_key = TestCerts::Read(certs_.acme_key);
  creds.pem_cert_chain = TestCerts::Read(certs_.acme_cert);
  auto stub = vin::v1::VinDecoderService::NewStub(grpc::CreateChannel(
      absl::StrCat("127.0.0.1:", server_.port()), grpc::SslCredentials(creds)));
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(20)));
  ctx.AddMetadata("x-vin-tenant", "someone-else");
  vin::v1::DecodeRequest req;
  req.set_vin(ValidVin(24));
  vin::v1::DecodeResponse resp;
  const grpc::Status g = stub->Decode(&ctx, req, &resp);
  EXPECT_TRUE(g.ok()) << g.error_message();

  std::string text;
  const auto samples = Scrape(&text);
  const std::string label =
      absl::StrReplaceAll(TestCerts::kAcmeSubject, {{"\\", "\\\\"}});
  const auto it =
      samples.find(absl::StrCat("vin_upstream_tenant_vins_total{tenant=\"",
                                label, "\",priority=\"interactive\"}"));
  ASSERT_NE(it, samples.end()) << text;
  EXPECT_EQ(it->second, 2) << "one VIN over HTTP, one over gRPC";
  EXPECT_THAT(text, Not(HasSubstr("someone-else")));
  EXPECT_EQ(testing_util::Sum(samples, "vin_upstream_vins_total"), 2)
      << "the refused clients reached nothing";
}

// The metrics name tenants: on an address that is not loopback, only over
// TLS or with --metrics_public; a usage error (exit 2) otherwise.
TEST_F(AttackTlsTest, APublicMetricsAddressNeedsTlsOrSayingSo) {
  testing_util::Subprocess refused;
  ASSERT_TRUE(refused.Start(
      {VIN_SERVER_BIN, "--listen=127.0.0.1:0", "--metrics_listen=0.0.0.0:0"}));
  EXPECT_EQ(refused.Wait(absl::Seconds(20)), 2);
  const auto why = refused.WaitForLine("vin-server:", absl::Seconds(1));
  ASSERT_TRUE(why.has_value());
  for (const char* flag :
       {"--metrics_listen=0.0.0.0:0", "--metrics_tls_cert_file",
        "--metrics_tls_key_file", "--metrics_public"}) {
    EXPECT_THAT(*why, HasSubstr(flag));
  }

  ASSERT_NO_FATAL_FAILURE(
      StartServer({"--metrics_listen=0.0.0.0:0", "--metrics_public"}));
  EXPECT_GT(Scrape().count("vin_upstream_vins_total"), 0u)
      << "said public: served in plaintext";
}

TEST_F(AttackTlsTest, TheMetricsServeTlsAndCanRequireTheScrapersCertificate) {
  ASSERT_NO_FATAL_FAILURE(
      StartServer({"--metrics_listen=0.0.0.0:0",
                   "--metrics_tls_cert_file=" + certs_.server_cert,
                   "--metrics_tls_key_file=" + certs_.server_key,
                   "--metrics_tls_client_ca_file=" + certs_.ca}));
  const int port = server_.metrics_port();
  const HttpResponse scraped = Https(
      port, "/metrics", {certs_.ca, certs_.client_cert, certs_.client_key});
  EXPECT_EQ(scraped.status, 200) << scraped.error;
  EXPECT_THAT(scraped.body, HasSubstr("vin_upstream_vins_total"));
  EXPECT_THAT(scraped.Header("Content-Type"), HasSubstr("text/plain"));
  EXPECT_EQ(Https(port, "/metrics", {certs_.ca, "", ""}).status, 0)
      << "a scraper without a certificate";
  EXPECT_EQ(testing_util::HttpGet(port, "/metrics").status, 400) << "plaintext";
  EXPECT_EQ(
      Https(port, "/other", {certs_.ca, certs_.client_cert, certs_.client_key})
          .status,
      404);
}

}  // namespace
}  // namespace attack

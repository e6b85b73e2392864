// Certificates replaced without a restart or a dropped connection (README
// "TLS", DESIGN rule 19), on the real binary: the files are replaced by a
// renewed certificate (same CA, another CN and serial); new connections get
// it, a keep-alive connection opened before goes on; files that do not
// load leave the current certificate in place. Every wait is on the
// server's log or a condition polled to a deadline.
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>

#include <fstream>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "attack/attack_fixture.h"
#include "gmock/gmock.h"
#include "testing/eventually.h"
#include "testing/tls_client.h"
#include "testing/vin_gen.h"

namespace attack {
namespace {

using testing_util::HandshakeOptions;
using testing_util::HandshakeWith;
using testing_util::KeepAliveClient;
using testing_util::TestCerts;
using testing_util::TlsClient;
using testing_util::ValidVin;

class AttackTlsReloadTest : public AttackWithCertsTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(AttackWithCertsTest::SetUp());
    cert_ = certs_.dir + "/live.pem";
    key_ = certs_.dir + "/live.key";
    Install(certs_.server_cert, certs_.server_key);
  }

  // Replaces the live files as a deployment would: each written aside and
  // renamed over the old one (the certificate first).
  void Install(const std::string& cert, const std::string& key) {
    Put(cert_, TestCerts::Read(cert));
    Put(key_, TestCerts::Read(key));
  }
  static void Put(const std::string& path, const std::string& text) {
    const std::string aside = path + ".new";
    std::ofstream(aside) << text;
    ASSERT_EQ(::rename(aside.c_str(), path.c_str()), 0) << path;
  }

  // The common name of the certificate a new connection to `port` gets.
  std::string NewConnectionSees(int port, const std::string& alpn = "") {
    HandshakeOptions o;
    o.alpn = alpn;
    const auto h = HandshakeWith(port, {certs_.ca, "", ""}, o);
    return h.ok ? h.peer_cn : "handshake failed: " + h.error;
  }

  // Polls until a new connection to `port` gets `cn`, for at most 20 s.
  bool Eventually(int port, const std::string& cn,
                  const std::string& alpn = "") {
    return testing_util::Eventually(
        [&] { return NewConnectionSees(port, alpn) == cn; }, absl::Seconds(20),
        absl::Milliseconds(100));
  }

  std::unique_ptr<vin::v1::VinDecoderService::Stub> GrpcStub() {
    grpc::SslCredentialsOptions creds;
    creds.pem_root_certs = TestCerts::Read(certs_.ca);
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL,
                1);  // a connection of its own
    return vin::v1::VinDecoderService::NewStub(
        grpc::CreateCustomChannel(absl::StrCat("127.0.0.1:", server_.port()),
                                  grpc::SslCredentials(creds), args));
  }
  static grpc::Status Decode(vin::v1::VinDecoderService::Stub* stub,
                             const std::string& vin) {
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(20)));
    vin::v1::DecodeRequest req;
    req.set_vin(vin);
    vin::v1::DecodeResponse resp;
    return stub->Decode(&ctx, req, &resp);
  }
  // The server's log lines so far that match `pattern`.
  int Count(const std::string& pattern) {
    const std::regex re(pattern);
    int n = 0;
    for (const std::string& line : server_.proc().lines()) {
      n += std::regex_search(line, re) ? 1 : 0;
    }
    return n;
  }
  static std::string Path(const std::string& vin) {
    return absl::StrCat("/api/vehicles/DecodeVinValues/", vin, "?format=json");
  }

  std::string cert_, key_;
};

// SIGHUP alone (no interval): the gateway and the metrics port take the
// renewed certificate for new connections; a keep-alive connection opened
// before goes on, on its own connection; a broken file is logged and the
// renewed certificate stays.
TEST_F(AttackTlsReloadTest,
       SighupRenewsTheGatewayAndMetricsKeepingOpenConnections) {
  ASSERT_NO_FATAL_FAILURE(StartServer(
      {"--http_tls_cert_file=" + cert_, "--http_tls_key_file=" + key_,
       "--metrics_tls_cert_file=" + cert_, "--metrics_tls_key_file=" + key_,
       "--tls_reload_interval=0"}));
  const int http = server_.http_port(), metrics = server_.metrics_port();
  EXPECT_EQ(NewConnectionSees(http), "server");
  EXPECT_EQ(NewConnectionSees(metrics), "server");
  KeepAliveClient open(http, {certs_.ca, "", ""});
  ASSERT_EQ(open.Get(Path(ValidVin(31))).status, 200);
  EXPECT_EQ(open.connects(), 1);

  Install(certs_.server2_cert, certs_.server2_key);
  server_.proc().Signal(SIGHUP);
  auto& p = server_.proc();
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  ASSERT_TRUE(
      p.WaitForLines("TLS certificate reloaded.*listener=http", 1, deadline));
  ASSERT_TRUE(p.WaitForLines("TLS certificate reloaded.*listener=metrics", 1,
                             deadline));
  EXPECT_EQ(NewConnectionSees(http), "server2");
  EXPECT_EQ(NewConnectionSees(metrics), "server2");

  const auto again = open.Get(Path(ValidVin(32)));
  EXPECT_EQ(again.status, 200) << again.error;
  EXPECT_EQ(open.connects(), 0) << "the connection opened before the reload";

  // A broken certificate file: logged, and the current certificate stays.
  Put(cert_,
      "-----BEGIN CERTIFICATE-----\nbroken\n-----END CERTIFICATE-----\n");
  server_.proc().Signal(SIGHUP);
  ASSERT_TRUE(p.WaitForLines("TLS certificate reload failed.*listener=http", 1,
                             absl::Now() + absl::Seconds(20)));
  EXPECT_EQ(NewConnectionSees(http), "server2");
  const TlsClient client{certs_.ca, "", ""};
  const auto fresh = testing_util::HttpCall(http, "GET", Path(ValidVin(33)), "",
                                            {}, absl::Seconds(30), &client);
  EXPECT_EQ(fresh.status, 200) << fresh.error;
}

// No signal: with --tls_reload_interval=1s gRPC (through its file-watcher
// provider) and the gateway take the renewed certificate by themselves; a
// gRPC channel connected before keeps working; a key that is not the
// certificate's never reaches gRPC's handshaker.
TEST_F(AttackTlsReloadTest, TheIntervalRenewsGrpcAndTheGatewayWithoutASignal) {
  ASSERT_NO_FATAL_FAILURE(
      StartServer({"--tls_cert_file=" + cert_, "--tls_key_file=" + key_,
                   "--http_tls_cert_file=" + cert_,
                   "--http_tls_key_file=" + key_, "--tls_reload_interval=1s"}));
  const int grpc_port = server_.port(), http = server_.http_port();
  EXPECT_EQ(NewConnectionSees(grpc_port, "h2"), "server");
  auto before = GrpcStub();
  ASSERT_TRUE(Decode(before.get(), ValidVin(41)).ok());

  Install(certs_.server2_cert, certs_.server2_key);
  EXPECT_TRUE(Eventually(grpc_port, "server2", "h2"))
      << NewConnectionSees(grpc_port, "h2");
  EXPECT_TRUE(Eventually(http, "server2")) << NewConnectionSees(http);
  EXPECT_TRUE(server_.proc()
                  .WaitForLine("TLS certificate reloaded.*listener=grpc",
                               absl::Seconds(5))
                  .has_value());
  const grpc::Status kept = Decode(before.get(), ValidVin(42));
  EXPECT_TRUE(kept.ok()) << "the channel connected before: "
                         << kept.error_message();

  // The old key under the renewed certificate: refused, logged, and gRPC
  // goes on with the pair it has. (The renewal above may have been seen
  // half done, the key still the old one, and logged so: a new line.)
  const char kFailed[] = "TLS certificate reload failed.*listener=grpc";
  const int failed_before = Count(kFailed);
  Put(key_, TestCerts::Read(certs_.server_key));
  ASSERT_TRUE(server_.proc().WaitForLines(kFailed, failed_before + 1,
                                          absl::Now() + absl::Seconds(20)));
  EXPECT_EQ(NewConnectionSees(grpc_port, "h2"), "server2");
  auto after = GrpcStub();
  const grpc::Status fresh = Decode(after.get(), ValidVin(43));
  EXPECT_TRUE(fresh.ok()) << "a new connection: " << fresh.error_message();
}

// A key file swapped for a FIFO nothing writes to (or for a device that
// never ends): before, the SIGHUP reload read it on main's signal thread
// and waited for ever, so SIGTERM went unobeyed. The file is refused by
// name, TLS goes on with the certificate in use, and SIGTERM ends the
// server at once.
TEST_F(AttackTlsReloadTest, AKeySwappedForAFifoIsRefusedAndSigtermIsObeyed) {
  ASSERT_NO_FATAL_FAILURE(StartServer({"--http_tls_cert_file=" + cert_,
                                       "--http_tls_key_file=" + key_,
                                       "--tls_reload_interval=0"}));
  const int http = server_.http_port();
  EXPECT_EQ(NewConnectionSees(http), "server");
  const std::string fifo = certs_.dir + "/fifo.key";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  ASSERT_EQ(::rename(fifo.c_str(), key_.c_str()), 0);

  auto& p = server_.proc();
  p.Signal(SIGHUP);
  ASSERT_TRUE(p.WaitForLines(
      "TLS certificate reload failed.*listener=http.*not a regular file", 1,
      absl::Now() + absl::Seconds(20)));
  EXPECT_EQ(NewConnectionSees(http), "server");
  const TlsClient client{certs_.ca, "", ""};
  const auto answer = testing_util::HttpCall(
      http, "GET", Path(ValidVin(51)), "", {}, absl::Seconds(30), &client);
  EXPECT_EQ(answer.status, 200) << answer.error;

  ASSERT_EQ(::unlink(key_.c_str()), 0);
  ASSERT_EQ(::symlink("/dev/zero", key_.c_str()), 0);
  p.Signal(SIGHUP);
  // (The second refusal: the FIFO was the first.)
  ASSERT_TRUE(p.WaitForLines(
      "TLS certificate reload failed.*listener=http.*not a regular file", 2,
      absl::Now() + absl::Seconds(20)));
  p.Signal(SIGTERM);
  const absl::optional<int> status = p.Wait(absl::Seconds(20));
  ASSERT_TRUE(status.has_value()) << "SIGTERM was not obeyed";
  EXPECT_EQ(*status, 0);
}

}  // namespace
}  // namespace attack

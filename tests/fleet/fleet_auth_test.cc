// Reaching a Redis that does not let everyone in: an ACL user and its
// password (in --redis_url, percent-encoded, or in --redis_password_file),
// and TLS (rediss://) with a test CA and a client certificate for
// tls-auth-clients. What is refused -- a wrong password, a certificate of
// another CA or for another name -- is one clear log line of vin-server,
// never showing the password, and the replica decodes alone (rule 16).
// Real redis-server (Debian's is built with TLS); certificates made at
// test time (testing/test_certs.h).
#include <signal.h>

#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "fleet_test_fixture.h"
#include "gtest/gtest.h"
#include "testing/redis_probe.h"
#include "testing/subprocess.h"
#include "testing/test_certs.h"
#include "testing/vin_gen.h"

namespace fleet_test {
namespace {

using testing_util::ValidVin;
using vin::v1::DecodeResponse;

constexpr char kPassword[] = "p@ss:w0rd%";
constexpr char kPasswordInUrl[] = "p%40ss%3Aw0rd%25";

// The ACL README "Running a fleet" gives a replica's user: its keys and
// channel, and the commands the fleet runs (those its scripts call too);
// the default user is off.
std::vector<std::string> AclArgs() {
  return {"--user",
          "default",
          "off",
          "--user",
          "vin",
          "on",
          absl::StrCat(">", kPassword),
          "resetkeys",
          "~vin:*",
          "resetchannels",
          "&vin:*",
          "-@all",
          "+ping",
          "+select",
          "+eval",
          "+get",
          "+set",
          "+del",
          "+pexpire",
          "+pttl",
          "+hmget",
          "+hset",
          "+time",
          "+publish",
          "+subscribe"};
}

class FleetAuthTest : public FleetTest {
 protected:
  void SetUp() override { StartFake(); }  // Redis: each test's own
  void TearDown() override {
    FleetTest::TearDown();
    testing_util::RemoveTestCerts(certs_);
    if (!password_file_.empty()) std::remove(password_file_.c_str());
  }
  void StartRedis(std::vector<std::string> args, bool tls = false) {
    redis_.Configure(std::move(args), tls);
    std::string error;
    ASSERT_TRUE(redis_.Start(&error)) << error;
  }
  std::vector<std::string> TlsArgs(const std::string& cert,
                                   const std::string& key, bool clients) {
    return {"--tls-cert-file",    cert,
            "--tls-key-file",     key,
            "--tls-ca-cert-file", certs_.ca,
            "--tls-auth-clients", clients ? "yes" : "no"};
  }

  // A vin-server process on this fleet's Redis with `flags`, held no more
  // than 300 ms for its join; its log says "cannot use redis" with `says`,
  // it serves alone, and no line shows `secret`.
  void ExpectRefused(const std::vector<std::string>& flags,
                     const std::string& says, const std::string& secret) {
    testing_util::Subprocess proc;
    std::vector<std::string> argv = {VIN_SERVER_BIN, "--listen=127.0.0.1:0",
                                     "--vpic_base_url=" + fake_->base_url(),
                                     "--redis_connect_timeout=300ms"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    ASSERT_TRUE(proc.Start(argv));
    auto refused = proc.WaitForLine("cannot use redis", absl::Seconds(20));
    ASSERT_TRUE(refused.has_value()) << absl::StrJoin(proc.lines(), "\n");
    EXPECT_NE(refused->find(says), std::string::npos) << *refused;
    EXPECT_NE(refused->find("decoding alone"), std::string::npos) << *refused;
    ASSERT_TRUE(proc.WaitForLine("serving in local mode", absl::Seconds(20)))
        << absl::StrJoin(proc.lines(), "\n");
    auto listening = proc.WaitForLine("listening on", absl::Seconds(20));
    ASSERT_TRUE(listening.has_value());
    auto stub = vin::v1::VinDecoderService::NewStub(
        grpc::CreateChannel(absl::StrCat("127.0.0.1:", PortIn(*listening)),
                            grpc::InsecureChannelCredentials()));
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
    vin::v1::DecodeRequest req;
    req.set_vin(ValidVin(8801));
    DecodeResponse resp;
    const grpc::Status s = stub->Decode(&ctx, req, &resp);
    EXPECT_TRUE(s.ok()) << "the replica decodes alone: " << s.error_message();
    proc.Signal(SIGTERM);
    EXPECT_EQ(proc.Wait(absl::Seconds(20)), 0);
    for (const std::string& line : proc.lines()) {
      EXPECT_EQ(line.find(secret), std::string::npos) << line;
    }
  }

  // Once both replicas are in: `vin` decoded by replica 0 (vPIC) is
  // answered by replica 1 from the fleet's cache, one request in all.
  void ExpectDecodesShared(const std::string& vin) {
    WaitForRedis();
    DecodeResponse r;
    ASSERT_TRUE(Decode(0, vin, &r).ok());
    EXPECT_EQ(r.result().source(), vin::v1::SOURCE_VPIC);
    ASSERT_TRUE(Decode(1, vin, &r).ok());
    EXPECT_EQ(r.result().source(), vin::v1::SOURCE_CACHE) << "shared";
    EXPECT_EQ(r.result().vehicle().make(), "HONDA");
    EXPECT_EQ(fake_->RequestCount(vin), 1);
  }

  testing_util::TestCerts certs_;
  std::string password_file_;
};

TEST_F(FleetAuthTest, AnAclUserWithItsPasswordJoinsTheFleet) {
  StartRedis(AclArgs());
  auto anonymous = testing_util::RedisCall(redis_.port(), {"PING"});
  ASSERT_FALSE(anonymous.ok()) << "the default user is off";
  server::ServerOptions o = Defaults();
  o.fleet.size_hint = 2;
  o.fleet.redis_url = absl::StrCat("redis://vin:", kPasswordInUrl,
                                   "@127.0.0.1:", redis_.port());
  AddReplica(o);
  // The second replica keeps its password in a file.
  password_file_ = absl::StrCat("/tmp/vin-redis-password-", getpid());
  std::ofstream(password_file_) << kPassword << "\n";
  o.fleet.redis_url = absl::StrCat("redis://vin@127.0.0.1:", redis_.port());
  o.fleet.redis_password_file = password_file_;
  AddReplica(o);
  ExpectDecodesShared(ValidVin(8701));
}

TEST_F(FleetAuthTest, AWrongPasswordIsRefusedWithAClearLogLine) {
  StartRedis(AclArgs());
  ExpectRefused(
      {absl::StrCat("--redis_url=redis://vin:Wr0ngPassw0rd@127.0.0.1:",
                    redis_.port())},
      "refused AUTH as user", "Wr0ngPassw0rd");
  ExpectRefused({absl::StrCat("--redis_url=redis://127.0.0.1:", redis_.port())},
                "wants credentials", kPassword);
}

TEST_F(FleetAuthTest, ADecodeCachedOverTlsIsServedByASecondReplica) {
  certs_ = testing_util::MakeTestCerts();
  ASSERT_FALSE(certs_.ca.empty());
  // TLS only (--port 0), and a client certificate required.
  StartRedis(TlsArgs(certs_.server_cert, certs_.server_key, true), true);
  server::ServerOptions o = Defaults();
  o.fleet.size_hint = 2;
  o.fleet.redis_url = redis_.url();
  ASSERT_EQ(o.fleet.redis_url.substr(0, 9), "rediss://");
  o.fleet.tls.ca_file = certs_.ca;
  o.fleet.tls.cert_file = certs_.client_cert;
  o.fleet.tls.key_file = certs_.client_key;
  AddReplica(o);  // checks the certificate's IP address
  o.fleet.redis_url = absl::StrCat("rediss://localhost:", redis_.port());
  AddReplica(o);  // its DNS name (and sends it as SNI)
  ExpectDecodesShared(ValidVin(8702));
}

TEST_F(FleetAuthTest, ACertificateOfAnotherCaOrForAnotherNameIsRefused) {
  certs_ = testing_util::MakeTestCerts();
  ASSERT_FALSE(certs_.ca.empty());
  const std::vector<std::string> flags = {"--redis_tls_ca_file=" + certs_.ca};
  StartRedis(TlsArgs(certs_.other_server_cert, certs_.other_server_key, false),
             true);
  std::vector<std::string> f = flags;
  f.push_back("--redis_url=" + redis_.url());
  ExpectRefused(f, "does not verify", "no secret here");
  ASSERT_TRUE(redis_.Stop());
  StartRedis(
      TlsArgs(certs_.misnamed_server_cert, certs_.misnamed_server_key, false),
      true);
  ExpectRefused(f, "IP address mismatch", "no secret here");
  ExpectRefused(
      {"--redis_tls_ca_file=" + certs_.ca,
       absl::StrCat("--redis_url=rediss://localhost:", redis_.port())},
      "hostname mismatch", "no secret here");
}

}  // namespace
}  // namespace fleet_test

// The listeners' flag checks (server/common/listener_checks.h,
// server/common/tls_files.h), as tables: which addresses parse and are
// loopback, when the metrics may leave loopback, which TLS flags go together,
// the reload interval; and the certificate files' checks against files made at
// test time.
#include "server/common/listener_checks.h"

#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/common/tls_files.h"
#include "testing/test_certs.h"

namespace server {
namespace {

using testing::HasSubstr;

TEST(ParseListenAddress, HostsPortsAndLoopback) {
  struct Case {
    const char* listen;
    const char* host;
    int port;
    bool loopback;
  };
  for (const Case& c : std::vector<Case>{
           {"127.0.0.1:9464", "127.0.0.1", 9464, true},
           {"127.5.6.7:0", "127.5.6.7", 0, true},
           {"[::1]:8080", "::1", 8080, true},
           {"[::ffff:127.0.0.1]:1", "::ffff:127.0.0.1", 1, true},
           {"0.0.0.0:9464", "0.0.0.0", 9464, false},
           {":9464", "0.0.0.0", 9464, false},
           {"10.1.2.3:443", "10.1.2.3", 443, false},
           {"[::]:443", "::", 443, false},
       }) {
    auto a = ParseListenAddress(c.listen, "--metrics_listen");
    ASSERT_TRUE(a.ok()) << c.listen << ": " << a.status();
    EXPECT_EQ(a->host, c.host) << c.listen;
    EXPECT_EQ(a->port, c.port) << c.listen;
    EXPECT_EQ(a->loopback, c.loopback) << c.listen;
  }
}

TEST(ParseListenAddress, BadValuesNameTheFlag) {
  struct Case {
    const char* listen;
    const char* says;
  };
  for (const Case& c : std::vector<Case>{
           {"9464", "--metrics_listen must be host:port, got \"9464\""},
           {"127.0.0.1:99999", "must be host:port"},
           {"127.0.0.1:-1", "must be host:port"},
           {"localhost:9464", "--metrics_listen: \"localhost\" is not an IP"},
       }) {
    auto a = ParseListenAddress(c.listen, "--metrics_listen");
    ASSERT_FALSE(a.ok()) << c.listen;
    EXPECT_TRUE(absl::IsInvalidArgument(a.status())) << c.listen;
    EXPECT_THAT(std::string(a.status().message()), HasSubstr(c.says))
        << c.listen;
  }
}

TEST(CheckMetricsExposure, ANonLoopbackAddressNeedsTlsOrSayingPublic) {
  const TlsOptions none;
  const TlsOptions tls{"cert.pem", "key.pem", ""};
  struct Case {
    const char* listen;
    TlsOptions tls;
    bool metrics_public;
    bool ok;
  };
  for (const Case& c : std::vector<Case>{
           {"", none, false, true},  // no metrics
           {"127.0.0.1:9464", none, false, true},
           {"[::1]:9464", none, false, true},
           {"127.0.0.1:9464", tls, false, true},
           {"0.0.0.0:9464", none, false, false},
           {":9464", none, false, false},
           {"10.0.0.5:9464", none, false, false},
           {"[::]:9464", none, false, false},
           {"0.0.0.0:9464", tls, false, true},
           {"0.0.0.0:9464", none, true, true},
           {"10.0.0.5:9464", tls, true, true},
       }) {
    const absl::Status s =
        CheckMetricsExposure(c.listen, c.tls, c.metrics_public);
    EXPECT_EQ(s.ok(), c.ok) << c.listen << " tls=" << c.tls.enabled()
                            << " public=" << c.metrics_public << ": " << s;
    if (!c.ok) {
      EXPECT_TRUE(absl::IsInvalidArgument(s));
      for (const char* flag : {"--metrics_listen", "--metrics_tls_cert_file",
                               "--metrics_tls_key_file", "--metrics_public"}) {
        EXPECT_THAT(std::string(s.message()), HasSubstr(flag)) << c.listen;
      }
    }
  }
}

TEST(CheckMetricsExposure, TlsFlagsNeedAListenerAndEachOther) {
  EXPECT_THAT(
      std::string(
          CheckMetricsExposure("", {"c.pem", "k.pem", ""}, false).message()),
      HasSubstr("need --metrics_listen"));
  EXPECT_THAT(
      std::string(CheckMetricsExposure("0.0.0.0:1", {"c.pem", "", ""}, false)
                      .message()),
      HasSubstr("--metrics_tls_cert_file and --metrics_tls_key_file "
                "go together"));
}

TEST(CheckTlsOptions, TheFilesGoTogether) {
  struct Case {
    TlsOptions tls;
    const char* says;  // "" when fine
  };
  for (const Case& c : std::vector<Case>{
           {{"", "", ""}, ""},
           {{"c", "k", ""}, ""},
           {{"c", "k", "ca"}, ""},
           {{"c", "", ""},
            "--http_tls_cert_file and --http_tls_key_file go "
            "together"},
           {{"", "k", ""}, "go together"},
           {{"", "", "ca"},
            "--http_tls_client_ca_file needs "
            "--http_tls_cert_file and --http_tls_key_file"},
       }) {
    const absl::Status s = CheckTlsOptions(c.tls, "--http_tls");
    if (std::string(c.says).empty()) {
      EXPECT_TRUE(s.ok()) << s;
    } else {
      EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
      EXPECT_THAT(std::string(s.message()), HasSubstr(c.says));
    }
  }
}

TEST(CheckTlsReloadInterval, ZeroOrAtLeastASecond) {
  EXPECT_TRUE(CheckTlsReloadInterval(absl::ZeroDuration()).ok());
  EXPECT_TRUE(CheckTlsReloadInterval(absl::Seconds(1)).ok());
  EXPECT_TRUE(CheckTlsReloadInterval(absl::Hours(1)).ok());
  for (absl::Duration d : {absl::Milliseconds(500), absl::Seconds(-1)}) {
    const absl::Status s = CheckTlsReloadInterval(d);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << d;
    EXPECT_THAT(std::string(s.message()), HasSubstr("--tls_reload_interval"));
  }
}

class TlsFilesTest : public testing::Test {
 protected:
  void SetUp() override {
    certs_ = testing_util::MakeTestCerts();
    ASSERT_FALSE(certs_.ca.empty());
  }
  void TearDown() override { testing_util::RemoveTestCerts(certs_); }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = certs_.dir + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  testing_util::TestCerts certs_;
};

TEST_F(TlsFilesTest, AMatchingPairLoadsWithItsSubjectSerialAndExpiry) {
  auto m = LoadTlsMaterial({certs_.server_cert, certs_.server_key, certs_.ca},
                           "--http_tls");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->subject, "CN=server");
  EXPECT_FALSE(m->serial.empty());
  EXPECT_THAT(m->not_after, testing::MatchesRegex("20[0-9-]+T[0-9:]+Z"));
  EXPECT_FALSE(m->client_ca.empty());
  auto acme = LoadTlsMaterial({certs_.acme_cert, certs_.acme_key, ""}, "--tls");
  ASSERT_TRUE(acme.ok()) << acme.status();
  EXPECT_EQ(acme->subject, testing_util::TestCerts::kAcmeSubject)
      << "gRPC's form: RFC 2253, last part first, the comma escaped";
}

TEST_F(TlsFilesTest, WhatDoesNotMakeAPairIsRefusedNamingTheFlag) {
  const std::string garbage = Write("garbage.pem", "not a certificate\n");
  const std::string encrypted =
      Write("encrypted.key",
            "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIB\n"
            "-----END ENCRYPTED PRIVATE KEY-----\n");
  struct Case {
    TlsOptions tls;
    const char* says;
    absl::StatusCode code;
  };
  for (const Case& c : std::vector<Case>{
           {{certs_.server_cert, certs_.server2_key, ""},
            "--metrics_tls_key_file: the key in",
            absl::StatusCode::kInvalidArgument},
           {{garbage, certs_.server_key, ""},
            "--metrics_tls_cert_file: ",
            absl::StatusCode::kInvalidArgument},
           {{certs_.server_cert, garbage, ""},
            "holds no usable PEM private key",
            absl::StatusCode::kInvalidArgument},
           {{certs_.server_cert, encrypted, ""},
            "it is encrypted",
            absl::StatusCode::kInvalidArgument},
           {{certs_.server_cert, certs_.server_key, garbage},
            "--metrics_tls_client_ca_file: ",
            absl::StatusCode::kInvalidArgument},
           {{certs_.dir + "/missing.pem", certs_.server_key, ""},
            "missing.pem",
            absl::StatusCode::kNotFound},
       }) {
    auto m = LoadTlsMaterial(c.tls, "--metrics_tls");
    ASSERT_FALSE(m.ok()) << c.says;
    EXPECT_EQ(m.status().code(), c.code) << m.status();
    EXPECT_THAT(std::string(m.status().message()), HasSubstr(c.says));
  }
}

TEST(FitConnectionsToFiles, TheGatewayLeavesAReserveForGrpcAndVpic) {
  // A million descriptors (systemd's usual hard limit): 4,096 fits.
  ConnectionBudget b = FitConnectionsToFiles(1 << 20, -1, 4096, 64);
  EXPECT_EQ(b.http_max_connections, 4096);
  EXPECT_FALSE(b.lowered);
  EXPECT_EQ(b.reserve, (1 << 20) / 4);
  // Debian's usual 1,024: a quarter kept, the metrics' 64, the rest HTTP.
  b = FitConnectionsToFiles(1024, -1, 4096, 64);
  EXPECT_EQ(b.reserve, 256);
  EXPECT_EQ(b.http_max_connections, 1024 - 256 - 64);
  EXPECT_TRUE(b.lowered);
  // 400: the reserve's floor of 128.
  b = FitConnectionsToFiles(400, -1, 4096, 64);
  EXPECT_EQ(b.reserve, 128);
  EXPECT_EQ(b.http_max_connections, 400 - 128 - 64);
  // The operator's reserve, 0 included.
  EXPECT_EQ(FitConnectionsToFiles(400, 0, 4096, 64).http_max_connections,
            336);
  EXPECT_EQ(FitConnectionsToFiles(400, 300, 4096, 64).http_max_connections,
            36);
  // A cap that fits stays as asked.
  b = FitConnectionsToFiles(1024, -1, 100, 64);
  EXPECT_EQ(b.http_max_connections, 100);
  EXPECT_FALSE(b.lowered);
  // Never below one; unknown or unlimited limits fit anything.
  EXPECT_EQ(FitConnectionsToFiles(100, -1, 4096, 64).http_max_connections, 1);
  EXPECT_EQ(FitConnectionsToFiles(0, -1, 4096, 64).http_max_connections, 4096);
  EXPECT_EQ(FitConnectionsToFiles(int64_t{1} << 40, -1, 4096, 64)
                .http_max_connections,
            4096);
}

}  // namespace
}  // namespace server

// Identity and priority that cannot be forged (DESIGN rules 17 and 19), on
// the real binary: the tenant header is believed from a trusted proxy only,
// and then its last value; any bytes in it leave every metrics scrape
// valid; a stream is interactive only for the tenants the operator lists.
#include <arpa/inet.h>
#include <grpcpp/create_channel.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "attack/attack_fixture.h"
#include "gmock/gmock.h"
#include "testing/batch_session.h"
#include "testing/exposition.h"
#include "testing/vin_gen.h"

namespace attack {
namespace {

using testing::HasSubstr;
using testing::Not;
using testing_util::ConnectFrom;
using testing_util::RawStatus;
using testing_util::ReadUntilClosed;
using testing_util::SendAll;
using testing_util::ValidVin;

class AttackTenantTest : public AttackTest {
 protected:
  // `request` sent from local address `from`; the answer's status.
  int SendFrom(const std::string& from, const std::string& request) {
    const int fd = ConnectFrom(server_.http_port(), from);
    if (fd < 0) return 0;
    const bool sent = SendAll(fd, request);
    const std::string answer =
        sent ? ReadUntilClosed(fd, absl::Seconds(30)) : "";
    close(fd);
    return RawStatus(answer);
  }
  std::string Get(const std::string& vin, const std::string& headers) {
    return Head("GET", absl::StrCat("/api/vehicles/DecodeVinValues/", vin),
                headers + "Connection: close\r\n");
  }
  std::string Stream(const std::string& vin, const std::string& headers) {
    const std::string body = absl::StrCat(
        "{\"vin\":\"", vin, "\",\"priority\":\"PRIORITY_INTERACTIVE\"}\n");
    return Head(
               "POST", "/v1/decode:batch",
               absl::StrCat(headers, "Content-Length: ", body.size(), "\r\n")) +
           body;
  }
  // VINs sent to vPIC for `tenant` at `priority`, from the metrics.
  double Sent(const std::string& tenant, const std::string& priority) {
    const auto s = Scrape();
    const auto it =
        s.find(absl::StrCat("vin_upstream_tenant_vins_total{tenant=\"", tenant,
                            "\",priority=\"", priority, "\"}"));
    return it == s.end() ? 0 : it->second;
  }
};

TEST_F(AttackTenantTest,
       TheHeaderOfAnUntrustedPeerIsIgnoredAndAProxysLastValueWins) {
  ASSERT_NO_FATAL_FAILURE(StartServer({"--trusted_proxies=127.0.0.2/32"}));
  // A client that names itself: not believed.
  EXPECT_EQ(SendFrom("127.0.0.1", Get(ValidVin(201), "x-vin-tenant: acme\r\n")),
            200);
  // Through the trusted proxy at 127.0.0.2, which appends its own value
  // after the one its client sent: the proxy's is the tenant.
  EXPECT_EQ(SendFrom("127.0.0.2", Get(ValidVin(202),
                                      "x-vin-tenant: client-claim\r\n"
                                      "X-Vin-Tenant: proxy-set\r\n")),
            200);
  // gRPC from 127.0.0.1, untrusted as well.
  grpc::ClientContext ctx;
  ctx.AddMetadata("x-vin-tenant", "acme");
  vin::v1::DecodeRequest req;
  req.set_vin(ValidVin(203));
  vin::v1::DecodeResponse resp;
  EXPECT_TRUE(server_.stub()->Decode(&ctx, req, &resp).ok());

  std::string text;
  Scrape(&text);
  EXPECT_THAT(text, Not(HasSubstr("tenant=\"acme\"")));
  EXPECT_THAT(text, Not(HasSubstr("client-claim")));
  EXPECT_EQ(Sent("default", "interactive"), 2) << text;
  EXPECT_EQ(Sent("proxy-set", "interactive"), 1) << text;
}

// Whether this machine has an IPv6 loopback to listen on.
bool HasIpv6Loopback() {
  const int fd = socket(AF_INET6, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  a.sin6_addr = in6addr_loopback;
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
  close(fd);
  return ok;
}

// gRPC over IPv6 loopback: ::1 is in the default --trusted_proxies, so a
// proxy there is believed. (gRPC writes an IPv6 peer as a URI,
// "ipv6:%5B::1%5D:port": read as written, no IPv6 proxy was ever trusted.)
TEST_F(AttackTenantTest, AGrpcProxyOnIpv6LoopbackIsTrusted) {
  if (!HasIpv6Loopback()) GTEST_SKIP() << "this machine has no ::1";
  ASSERT_NO_FATAL_FAILURE(StartServer({"--listen=[::1]:0"}));
  auto stub = vin::v1::VinDecoderService::NewStub(
      grpc::CreateChannel(absl::StrCat("[::1]:", server_.port()),
                          grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(20)));
  ctx.AddMetadata("x-vin-tenant", "v6-proxy");
  vin::v1::DecodeRequest req;
  req.set_vin(ValidVin(204));
  vin::v1::DecodeResponse resp;
  const grpc::Status s = stub->Decode(&ctx, req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(Sent("v6-proxy", "interactive"), 1);
  EXPECT_EQ(Sent("default", "interactive"), 0);
}

// One request with tenant bytes 0xff 0xfe, and one whose 128-byte cut
// falls inside a character: Prometheus must read every later scrape.
TEST_F(AttackTenantTest, AnyBytesInTheTenantLeaveEveryScrapeValid) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  EXPECT_EQ(
      SendFrom("127.0.0.1", Get(ValidVin(301), "x-vin-tenant: \xff\xfe\r\n")),
      200);
  EXPECT_EQ(SendFrom("127.0.0.1",
                     Get(ValidVin(302),
                         absl::StrCat("x-vin-tenant: ", std::string(127, 'a'),
                                      "\xc3\xa9\r\n"))),
            200);
  EXPECT_EQ(
      SendFrom("127.0.0.1", Get(ValidVin(303), "x-vin-tenant: a\"b\\c\r\n")),
      200);
  for (int scrape = 0; scrape < 3; ++scrape) {
    std::string text;
    Scrape(&text);
    EXPECT_EQ(testing_util::ExpositionProblem(text), "") << "scrape " << scrape;
    EXPECT_THAT(text, HasSubstr("tenant=\"\xef\xbf\xbd\xef\xbf\xbd\""));
    // (129 bytes: its start cut on a character boundary, and a digest.)
    EXPECT_THAT(text, HasSubstr(absl::StrCat("tenant=\"", std::string(111, 'a'),
                                             "~")));
    EXPECT_THAT(text, HasSubstr("tenant=\"a\\\"b\\\\c\""));
  }
  // What every target exposes, and the gateway's requests by route.
  std::string text;
  Scrape(&text);
  for (const char* family :
       {"vin_build_info{version=\"", "process_cpu_seconds_total ",
        "process_resident_memory_bytes ", "process_open_fds ",
        "process_start_time_seconds ",
        "vin_http_request_duration_seconds_count{route=\"vpic_values\","
        "code=\"200\"} 3"}) {
    EXPECT_THAT(text, HasSubstr(family));
  }
}

// --interactive_tenants: a stream or list of VINs is interactive only for
// the tenants listed; a single decode may always be; anyone may ask for
// bulk.
TEST_F(AttackTenantTest, StreamsAreInteractiveOnlyForTheListedTenants) {
  ASSERT_NO_FATAL_FAILURE(StartServer({"--interactive_tenants=acme"}));
  EXPECT_EQ(
      SendFrom("127.0.0.1", Stream(ValidVin(401), "x-vin-tenant: beta\r\n")),
      200);
  EXPECT_EQ(
      SendFrom("127.0.0.1", Stream(ValidVin(402), "x-vin-tenant: acme\r\n")),
      200);
  const std::string one =
      absl::StrCat("{\"vin\":\"", ValidVin(403),
                   "\",\"priority\":\"PRIORITY_INTERACTIVE\"}");
  EXPECT_EQ(
      SendFrom("127.0.0.1",
               Head("POST", "/v1/decode",
                    absl::StrCat("x-vin-tenant: beta\r\nConnection: close\r\n"
                                 "Content-Length: ",
                                 one.size(), "\r\n")) +
                   one),
      200);
  auto item = testing_util::Item(ValidVin(404));
  item.set_priority(vin::v1::PRIORITY_INTERACTIVE);
  const auto grpc_stream = testing_util::RunBatch(
      server_.stub(), {item}, {}, [](grpc::ClientContext* ctx) {
        ctx->AddMetadata("x-vin-tenant", "beta");
      });
  EXPECT_TRUE(grpc_stream.status.ok());
  EXPECT_EQ(Sent("beta", "bulk"), 2) << "the HTTP and the gRPC stream";
  EXPECT_EQ(Sent("beta", "interactive"), 1) << "the single decode";
  EXPECT_EQ(Sent("acme", "interactive"), 1);
}

}  // namespace
}  // namespace attack

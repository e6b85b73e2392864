// The gateway's head checks (rule 19), as tables: framing, Host, Origin.
#include "server/http/request_checks.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace server {
namespace http {
namespace {

using testing::HasSubstr;

TEST(FramingProblem, OnlyChunkedOrOneLength) {
  const struct {
    unsigned version;
    std::vector<absl::string_view> te;
    size_t lengths;
    const char* want;  // "" for sound, else part of the problem
  } cases[] = {
      {11, {}, 0, ""},
      {11, {}, 1, ""},
      {10, {}, 1, ""},
      {11, {"chunked"}, 0, ""},
      {11, {" Chunked "}, 0, ""},
      {11, {}, 2, "more than one Content-Length"},
      {11, {"identity"}, 1, "\"identity\" is not served"},
      {11, {"identity"}, 0, "\"identity\" is not served"},
      {11, {"chunked, identity"}, 0, "not served"},
      {11, {"xchunked"}, 0, "not served"},
      {11, {"chunked", "identity"}, 0, "not served"},
      {11, {"gzip, chunked"}, 0, "not served"},
      {11, {"chunked"}, 1, "both Transfer-Encoding and Content-Length"},
      {10, {"chunked"}, 0, "HTTP/1.1 only"},
  };
  for (const auto& c : cases) {
    const std::string p = FramingProblem(c.version, c.te, c.lengths);
    if (std::string(c.want).empty()) {
      EXPECT_EQ(p, "") << c.te.size() << " " << c.lengths;
    } else {
      EXPECT_THAT(p, HasSubstr(c.want));
    }
  }
}

TEST(AllowedHosts, LoopbackNamesOnALoopbackListenerByDefault) {
  auto loopback = AllowedHosts::Parse("", true);
  ASSERT_TRUE(loopback.ok());
  for (const char* ok :
       {"127.0.0.1", "127.0.0.1:8080", "127.1.2.3:1", "localhost",
        "LOCALHOST:80", "app.localhost:3000", "[::1]:8080", "[::1]", ""}) {
    EXPECT_TRUE(loopback->Allows(ok)) << ok;
  }
  for (const char* no : {"evil.example", "evil.example:8080",
                         "localhost.evil.example", "10.0.0.1", "[::2]:80",
                         "127.0.0.1.evil.example", "[::ffff:127.0.0.1]"}) {
    EXPECT_FALSE(loopback->Allows(no)) << no;
  }
  auto public_listener = AllowedHosts::Parse("", false);
  ASSERT_TRUE(public_listener.ok());
  EXPECT_TRUE(public_listener->Allows("anything.example"));
}

TEST(AllowedHosts, NamedHostsAndWildcards) {
  auto hosts = AllowedHosts::Parse("vin.example.com, *.corp.example,::1", true);
  ASSERT_TRUE(hosts.ok()) << hosts.status();
  EXPECT_TRUE(hosts->Allows("vin.example.com:443"));
  EXPECT_TRUE(hosts->Allows("VIN.Example.Com"));
  EXPECT_TRUE(hosts->Allows("a.b.corp.example"));
  EXPECT_TRUE(hosts->Allows("[::1]:80"));
  EXPECT_FALSE(hosts->Allows("corp.example")) << "*.x is a subdomain of x";
  EXPECT_FALSE(hosts->Allows("127.0.0.1")) << "named hosts replace the default";
  EXPECT_TRUE(AllowedHosts::Parse("*", true)->Allows("evil.example"));
  for (const char* bad : {"vin.example.com:443", "http://x", "a b", "[::1]"}) {
    const auto r = AllowedHosts::Parse(bad, true);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_THAT(std::string(r.status().message()),
                HasSubstr("--http_allowed_hosts"));
  }
}

TEST(SameOrigin, TheSchemeAndTheHostAsSent) {
  EXPECT_TRUE(SameOrigin("http://127.0.0.1:8080", "http", "127.0.0.1:8080"));
  EXPECT_TRUE(SameOrigin("HTTP://LOCALHOST:8080", "http", "localhost:8080"));
  EXPECT_FALSE(SameOrigin("http://127.0.0.1:8081", "http", "127.0.0.1:8080"));
  EXPECT_FALSE(SameOrigin("https://127.0.0.1:8080", "http", "127.0.0.1:8080"));
  EXPECT_FALSE(SameOrigin("null", "http", "127.0.0.1:8080"));
  EXPECT_FALSE(SameOrigin("http://", "http", ""));
  EXPECT_EQ(HostName("[::1]:8080"), "::1");
  EXPECT_EQ(HostName("Example.COM:80"), "example.com");
}

}  // namespace
}  // namespace http
}  // namespace server

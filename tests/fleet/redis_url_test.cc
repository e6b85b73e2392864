// --redis_url (fleet/redis_url.h): what each form means, what is wrong
// with a bad one, and that no message or log shows its password.
#include "fleet/redis_url.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace fleet {
namespace {

struct Good {
  std::string url;
  std::string host;
  int port;
  int db;
  bool tls;
  std::string user;
  std::string password;
};

TEST(RedisUrl, EachFormMeansWhatItSays) {
  const std::vector<Good> cases = {
      {"redis://10.0.0.5:6380/2", "10.0.0.5", 6380, 2, false, "", ""},
      {"redis://cache", "cache", 6379, 0, false, "", ""},
      {"redis://cache/", "cache", 6379, 0, false, "", ""},
      {"rediss://redis.internal:6390", "redis.internal", 6390, 0, true, "", ""},
      {"redis://:s3cret@h:1", "h", 1, 0, false, "", "s3cret"},
      {"redis://vin:s3cret@h:1/3", "h", 1, 3, false, "vin", "s3cret"},
      // Percent-escapes in both; an '@' and a ':' in the password.
      {"rediss://vin%2Dapp:p%40ss%3Aw%20rd@h", "h", 6379, 0, true, "vin-app",
       "p@ss:w rd"},
      // An unescaped '@' in the password: the last '@' ends it.
      {"redis://u:a@b@h:2", "h", 2, 0, false, "u", "a@b"},
      // A user alone (its password from --redis_password_file).
      {"redis://vin@h", "h", 6379, 0, false, "vin", ""},
      {"redis://[::1]:6400/1", "::1", 6400, 1, false, "", ""},
      {"redis://u:p@[::1]", "::1", 6379, 0, false, "u", "p"},
  };
  for (const Good& c : cases) {
    SCOPED_TRACE(c.url);
    auto a = ParseRedisUrl(c.url);
    ASSERT_TRUE(a.ok()) << a.status();
    EXPECT_EQ(a->host, c.host);
    EXPECT_EQ(a->port, c.port);
    EXPECT_EQ(a->db, c.db);
    EXPECT_EQ(a->tls, c.tls);
    EXPECT_EQ(a->user, c.user);
    EXPECT_EQ(a->password, c.password);
  }
  EXPECT_EQ(ParseRedisUrl("redis://[::1]:7")->Endpoint(), "[::1]:7");
  EXPECT_EQ(ParseRedisUrl("redis://h:7")->Endpoint(), "h:7");
}

struct Bad {
  std::string url;
  std::string says;  // in the error message
};

TEST(RedisUrl, BadOnesNameTheProblemWithoutThePassword) {
  const std::vector<Bad> cases = {
      {"http://x:1", "must look like redis://[[user]:password@]host"},
      {"x:1", "must look like redis://"},
      {"redis://x:99999", "bad port"},
      {"redis://x:0", "bad port"},
      {"redis://x:port", "bad port"},
      {"redis://:1", "no host"},
      {"redis://u:pw@:1", "no host"},
      {"redis://x:1/db", "bad database"},
      {"redis://x:1/-1", "bad database"},
      {"redis://x:1/ 2", "bad database"},
      {"redis://x:1?ssl=true", "a query or fragment"},
      {"redis://u:pw@x#frag", "a query or fragment"},
      {"redis://u:p%4@x", "bad percent-escape in the password"},
      {"redis://u:p%zz@x", "bad percent-escape in the password"},
      {"redis://u%g1:pw@x", "bad percent-escape in the user"},
      {"redis://u:@x", "empty password"},
      {"redis://ho st:1", "bad host"},
      {"redis://[::1:1", "unclosed ["},
      {"redis://[zz]:1", "bad IPv6"},
      {"redis://[::1]x", "bad port"},
  };
  for (const Bad& c : cases) {
    SCOPED_TRACE(c.url);
    auto a = ParseRedisUrl(c.url);
    ASSERT_FALSE(a.ok()) << "parsed: " << c.url;
    EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(a.status().message().find(c.says), absl::string_view::npos)
        << a.status();
  }
  // The password never shows, whatever else is wrong.
  for (const std::string& url : {std::string("redis://u:hunter2@x:99999"),
                                 std::string("http://u:hunter2@x"),
                                 std::string("redis://u:hunter2@x/db"),
                                 std::string("redis://u:hunter2@:1"),
                                 std::string("redis://u:hunter2@x?q")}) {
    auto a = ParseRedisUrl(url);
    ASSERT_FALSE(a.ok()) << url;
    EXPECT_EQ(a.status().message().find("hunter2"), absl::string_view::npos)
        << a.status();
    EXPECT_NE(a.status().message().find("***"), absl::string_view::npos)
        << a.status();
  }
}

TEST(RedisUrl, RedactedShowsEverythingButThePassword) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"redis://127.0.0.1:6379", "redis://127.0.0.1:6379"},
      {"redis://h:1/2", "redis://h:1/2"},
      {"redis://vin@h:1", "redis://vin@h:1"},
      {"redis://vin:s3cret@h:1/2", "redis://vin:***@h:1/2"},
      {"rediss://:s3cret@h", "rediss://:***@h"},
      {"redis://u:a@b@h:2", "redis://u:***@h:2"},
      {"redis://u:p%40w@h/0?x", "redis://u:***@h/0?x"},
      // A password with an unescaped '/', '?' or '#' (base64): still
      // masked, the URL failing to parse or not.
      {"redis://:pa/ss@h", "redis://:***@h"},
      {"redis://u:a+b/c=@h:1/0", "redis://u:***@h:1/0"},
      {"redis://:p?q@h", "redis://:***@h"},
      {"rediss://:p#q@h", "rediss://:***@h"},
      // Not a URL at all: whatever comes before an '@' may be secret.
      {"u:s3cret@h", "***@h"},
      {"", ""},
  };
  for (const auto& [url, shown] : cases) {
    EXPECT_EQ(RedactRedisUrl(url), shown) << url;
  }
}

}  // namespace
}  // namespace fleet

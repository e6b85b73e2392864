// The fixture of the HTTP gateway's tests (DESIGN "The HTTP gateway",
// server/http/): the real server in this process with its gateway on a free
// port, in front of the fake vPIC; requests through libcurl, or raw bytes where
// libcurl would not send them.
#ifndef VIN_TESTS_SERVER_HTTP_FIXTURE_H_
#define VIN_TESTS_SERVER_HTTP_FIXTURE_H_

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "snapshot/test_snapshot.h"
#include "testing/http_client.h"
#include "testing/server_fixture.h"

namespace server {
namespace testing_http {

using Json = nlohmann::ordered_json;

inline constexpr char kFord[] = "1FTMW1T88MFA00001";

// The body of a captured vPIC answer (tests/fixtures/vpic/).
inline Json Fixture(const std::string& name) {
  std::ifstream in(absl::StrCat(VIN_FIXTURE_DIR, "/", name));
  return Json::parse(in)["body"];
}

class HttpGatewayTest : public testing_util::ServerFixture {
 protected:
  void StartHttp(ServerOptions o = Defaults(),
                 absl::Duration head_timeout = absl::Milliseconds(500)) {
    o.http.listen = "127.0.0.1:0";
    o.http.head_timeout = head_timeout;
    StartServer(std::move(o));
    port_ = server_->http_port();
    ASSERT_GT(port_, 0);
  }
  // The snapshot loaded, and one live attempt with no breaker: a scripted
  // fault sends a request to its fallback at once.
  static ServerOptions SnapshotFallback() {
    ServerOptions o = Defaults();
    o.snapshot_path = snapshot::testing::SnapshotPath();
    o.engine.max_attempts = 1;
    o.engine.breaker.failures = 0;
    return o;
  }
  testing_util::HttpResponse Get(const std::string& path,
                                 const std::vector<std::string>& headers = {}) {
    return testing_util::HttpGet(port_, path, headers);
  }
  // The response's JSON; a failure when it is not JSON.
  static Json Body(const testing_util::HttpResponse& r) {
    Json j = Json::parse(r.body, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "not JSON: " << r.body;
    return j;
  }

  int port_ = 0;
};

}  // namespace testing_http
}  // namespace server

#endif  // VIN_TESTS_SERVER_HTTP_FIXTURE_H_

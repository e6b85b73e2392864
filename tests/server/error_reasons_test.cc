// Errors callers can read (DESIGN "Errors callers can read"): every reason
// the service gives, provoked for real and read back the way a program
// reads it: google.rpc.ErrorInfo (with BadRequest and RetryInfo) on a
// unary gRPC call, the same google.rpc.Status in JSON on POST /v1/decode,
// "reason" in the error body of vPIC's paths, and FailedEvent.reason_detail
// in a stream. The README lists every reason.
#include <google/protobuf/util/json_util.h>

#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "domain/error_reason.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "gtest/gtest.h"
#include "testing/batch_session.h"
#include "testing/http_client.h"
#include "tests/server/http_fixture.h"

namespace server {
namespace {

using testing_http::HttpGatewayTest;
using testing_http::Json;
using testing_util::HttpCall;
using testing_util::HttpResponse;

constexpr char kValid[] = "1HGCM82633A004352";  // Honda Accord 2003

// What a program reads off a failed gRPC call.
struct GrpcError {
  std::string reason, domain, field;
  std::map<std::string, std::string> metadata;
  bool retry_info = false;
};

GrpcError ReadGrpc(const grpc::Status& status) {
  GrpcError e;
  google::rpc::Status details;
  EXPECT_TRUE(details.ParseFromString(status.error_details()))
      << "no google.rpc.Status in " << status.error_message();
  EXPECT_EQ(details.code(), static_cast<int>(status.error_code()));
  for (const auto& any : details.details()) {
    google::rpc::ErrorInfo info;
    google::rpc::BadRequest bad;
    google::rpc::RetryInfo retry;
    if (any.UnpackTo(&info)) {
      e.reason = info.reason();
      e.domain = info.domain();
      e.metadata.insert(info.metadata().begin(), info.metadata().end());
    } else if (any.UnpackTo(&bad)) {
      EXPECT_EQ(bad.field_violations_size(), 1);
      if (bad.field_violations_size() > 0) {
        e.field = bad.field_violations(0).field();
      }
    } else if (any.UnpackTo(&retry)) {
      e.retry_info = true;
    }
  }
  return e;
}

// The same off a google.rpc.Status in protobuf's JSON mapping.
GrpcError ReadJson(const Json& status) {
  GrpcError e;
  if (!status.is_object() || !status.contains("details")) return e;
  for (const Json& d : status["details"]) {
    const std::string type = d.value("@type", "");
    if (type == "type.googleapis.com/google.rpc.ErrorInfo") {
      e.reason = d.value("reason", "");
      e.domain = d.value("domain", "");
      const Json metadata = d.value("metadata", Json::object());
      for (const auto& [k, v] : metadata.items()) {
        e.metadata[k] = v.get<std::string>();
      }
    } else if (type == "type.googleapis.com/google.rpc.BadRequest" &&
               d.contains("fieldViolations")) {
      e.field = d["fieldViolations"].at(0).value("field", "");
    } else if (type == "type.googleapis.com/google.rpc.RetryInfo") {
      e.retry_info = true;
    }
  }
  return e;
}

class ErrorReasonsTest;

struct Case {
  std::string name;
  std::string reason;
  grpc::StatusCode code;
  int http;           // the HTTP status of /v1/decode and vPIC's path
  std::string field;  // BadRequest's field, "" when none
  std::vector<std::string> metadata;  // keys ErrorInfo must carry
  bool retry_info = false;
  // gRPC ends a unary call at its deadline itself (no details): the
  // reason is read off a stream item, which the server fails just before.
  bool grpc_deadline = false;
  // The server's options, from Defaults().
  std::function<void(ServerOptions*)> configure = [](ServerOptions*) {};
  // The request, and what must happen before each call (scripts).
  vin::v1::DecodeRequest request;
  std::function<void(ErrorReasonsTest*, const std::string& vin)> before =
      [](ErrorReasonsTest*, const std::string&) {};
};

class ErrorReasonsTest : public HttpGatewayTest,
                         public testing::WithParamInterface<Case> {
 public:
  void ScriptFake(const std::string& vin, const std::string& steps) {
    Script(vin, steps);
  }
  grpc::Status DecodeNow(const std::string& vin) {
    vin::v1::DecodeResponse ignored;
    return Decode(vin, &ignored);
  }
  VinServer* server() { return server_.get(); }
};

vin::v1::DecodeRequest Asking(const std::string& vin, int year = 0) {
  vin::v1::DecodeRequest r;
  r.set_vin(vin);
  r.set_model_year(year);
  return r;
}

// A case with what every case has; the caller adds the rest.
Case& Add(std::vector<Case>* cases, std::string name, std::string reason,
          grpc::StatusCode code, int http, vin::v1::DecodeRequest request,
          std::vector<std::string> metadata = {"vin"}) {
  Case c;
  c.name = std::move(name);
  c.reason = std::move(reason);
  c.code = code;
  c.http = http;
  c.request = std::move(request);
  c.metadata = std::move(metadata);
  cases->push_back(std::move(c));
  return cases->back();
}

// The fake vPIC answers `steps` to each call's VIN.
std::function<void(ErrorReasonsTest*, const std::string&)> Scripted(
    std::string steps) {
  return [steps](ErrorReasonsTest* t, const std::string& vin) {
    t->ScriptFake(vin, steps);
  };
}

std::vector<Case> Cases() {
  using C = grpc::StatusCode;
  std::vector<Case> cases;
  const auto invalid = [&](std::string name, std::string reason,
                           std::string vin, std::string field, int year = 0) {
    Add(&cases, std::move(name), std::move(reason), C::INVALID_ARGUMENT, 400,
        Asking(vin, year))
        .field = std::move(field);
  };
  // (18: too long for a VIN, and for a partial one on vPIC's paths.)
  invalid("Length", "INVALID_VIN_LENGTH", "1HGCM82633A0043521", "vin");
  invalid("Character", "INVALID_VIN_CHARACTER", "1HGCM8263IA004352", "vin");
  invalid("ModelYearCode", "INVALID_VIN_MODEL_YEAR_CODE", "1HGCM8263UA004352",
          "vin");
  invalid("CheckDigit", "INVALID_VIN_CHECK_DIGIT", "1HGCM82643A004352", "vin");
  invalid("ModelYear", "INVALID_MODEL_YEAR", kValid, "model_year", 1999);

  // vPIC's side, scripted on the fake.
  Case* c = &Add(&cases, "Unavailable", "UPSTREAM_UNAVAILABLE", C::UNAVAILABLE,
                 503, Asking("1G4AH59H45G118341"), {"vin", "attempts"});
  c->retry_info = true;
  c->before = Scripted("503,503");
  c->configure = [](ServerOptions* o) {
    o->engine.max_attempts = 2;
    o->engine.budget.retry_ratio = -1;  // every retry allowed
  };
  c = &Add(&cases, "RetryBudget", "RETRY_BUDGET_EXHAUSTED", C::UNAVAILABLE, 503,
           Asking("1M8GDM9AXKP042788"), {"vin", "attempts"});
  c->retry_info = true;
  c->before = Scripted("503");
  c->configure = [](ServerOptions* o) {
    o->engine.budget.retry_ratio = 0;  // no retry allowed
    o->engine.budget.retry_min_per_second = 0;
  };
  // (After vPIC's 429 the server pauses: later calls wait for no attempt.)
  c = &Add(&cases, "RateLimited", "RATE_LIMITED", C::UNAVAILABLE, 503,
           Asking("1FTMW1T88MFA00001"), {"vin", "retryDelay"});
  c->retry_info = true;
  c->before = Scripted("429:120");
  c->configure = [](ServerOptions* o) {
    o->engine.retry_after_max = absl::Seconds(60);
  };
  c = &Add(&cases, "Rejected", "UPSTREAM_REJECTED", C::FAILED_PRECONDITION, 502,
           Asking("1G4AH59H45G118341"), {"vin", "attempts"});
  c->before = Scripted("400");

  // The breaker, opened by a first failure: later calls are refused.
  c = &Add(&cases, "BreakerOpen", "BREAKER_OPEN", C::UNAVAILABLE, 503,
           Asking(kValid), {"vin", "unreachableSince", "retryDelay"});
  c->retry_info = true;
  c->configure = [](ServerOptions* o) {
    o->engine.max_attempts = 1;
    o->engine.breaker.failures = 1;
    o->engine.breaker.cooldown = absl::Minutes(5);
    o->engine.breaker.cooldown_max = absl::Minutes(5);
  };
  c->before = [](ErrorReasonsTest* t, const std::string&) {
    t->ScriptFake("1G4AH59H45G118341", "503");
    (void)t->DecodeNow("1G4AH59H45G118341");  // opens it
  };

  // The server's side.
  Add(&cases, "ShuttingDown", "SHUTTING_DOWN", C::UNAVAILABLE, 503,
      Asking(kValid))
      .before = [](ErrorReasonsTest* t, const std::string&) {
    t->server()->engine().Drain();  // nothing decodes while it drains
  };
  Add(&cases, "Overloaded", "OVERLOADED", C::RESOURCE_EXHAUSTED, 429,
      Asking(kValid))
      .configure = [](ServerOptions* o) { o->engine.max_waiters = 0; };
  // vPIC hangs past the call's deadline.
  c = &Add(&cases, "DeadlineExceeded", "DEADLINE_EXCEEDED",
           C::DEADLINE_EXCEEDED, 504, Asking("1G4AH59H45G118341"));
  c->grpc_deadline = true;
  c->before = Scripted("hang");
  c->configure = [](ServerOptions* o) {
    o->engine.attempt_timeout = absl::Seconds(30);
    o->http.deadline = absl::Seconds(2);
  };
  Add(&cases, "SnapshotNotLoaded", "SNAPSHOT_NOT_LOADED",
      C::FAILED_PRECONDITION, 503, Asking(kValid))
      .request.set_source_preference(vin::v1::SOURCE_PREFERENCE_SNAPSHOT_ONLY);
  return cases;
}

TEST_P(ErrorReasonsTest, GrpcAndHttpCarryTheReason) {
  const Case& c = GetParam();
  ServerOptions o = Defaults();
  o.engine.breaker.failures = 0;
  c.configure(&o);
  StartHttp(o);

  // gRPC: the status, ErrorInfo, BadRequest, RetryInfo.
  c.before(this, c.request.vin());
  vin::v1::DecodeResponse response;
  const grpc::Status s = Decode(c.request, &response, absl::Seconds(3));
  ASSERT_EQ(s.error_code(), c.code) << s.error_message();
  if (c.grpc_deadline) {
    c.before(this, c.request.vin());
    const auto out = testing_util::RunBatch(
        stub_.get(), {testing_util::Item(c.request.vin())}, {}, {},
        absl::Seconds(3));
    ASSERT_FALSE(out.events.empty());
    ASSERT_TRUE(out.events.back().has_failed());
    EXPECT_EQ(out.events.back().failed().reason_detail(), c.reason);
  } else {
    GrpcError e = ReadGrpc(s);
    EXPECT_EQ(e.reason, c.reason) << s.error_message();
    EXPECT_EQ(e.domain, "vin.v1");
    EXPECT_EQ(e.field, c.field);
    for (const std::string& key : c.metadata) {
      EXPECT_TRUE(e.metadata.count(key)) << "gRPC metadata lacks " << key;
    }
    if (e.metadata.count("vin")) EXPECT_EQ(e.metadata["vin"], c.request.vin());
    EXPECT_EQ(e.retry_info, c.retry_info);
  }

  // POST /v1/decode: the same google.rpc.Status in JSON.
  c.before(this, c.request.vin());
  std::string body;
  ASSERT_TRUE(
      google::protobuf::util::MessageToJsonString(c.request, &body).ok());
  HttpResponse r = HttpCall(port_, "POST", "/v1/decode", body,
                            {"Content-Type: application/json"});
  ASSERT_EQ(r.status, c.http) << r.body;
  const Json j = Body(r);
  EXPECT_EQ(j.value("code", -1), static_cast<int>(c.code)) << r.body;
  const GrpcError e = ReadJson(j);
  EXPECT_EQ(e.reason, c.reason) << r.body;
  EXPECT_EQ(e.domain, "vin.v1");
  EXPECT_EQ(e.field, c.field) << r.body;
  for (const std::string& key : c.metadata) {
    EXPECT_TRUE(e.metadata.count(key)) << "JSON metadata lacks " << key;
  }
  EXPECT_EQ(e.retry_info, c.retry_info) << r.body;

  // vPIC's path: its own error shape, with the same reason.
  if (c.request.source_preference() != vin::v1::SOURCE_PREFERENCE_UNSPECIFIED) {
    return;  // (vPIC's paths have no source preference yet)
  }
  c.before(this, c.request.vin());
  std::string path = absl::StrCat("/api/vehicles/DecodeVinValues/",
                                  c.request.vin(), "?format=json");
  if (c.request.model_year() != 0) {
    absl::StrAppend(&path, "&modelyear=", c.request.model_year());
  }
  r = HttpCall(port_, "GET", path);
  ASSERT_EQ(r.status, c.http) << r.body;
  EXPECT_EQ(Body(r)["error"].value("reason", ""), c.reason) << r.body;
}

INSTANTIATE_TEST_SUITE_P(EveryReason, ErrorReasonsTest,
                         testing::ValuesIn(Cases()),
                         [](const testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });

// A stream item's failure carries the same reason in reason_detail, over
// gRPC and in the NDJSON stream: here a request_id over its limit, which
// only a stream has, and a check digit.
TEST_F(HttpGatewayTest, AStreamItemsFailureCarriesItsReason) {
  StartHttp();
  const std::string long_id(200, 'r');
  auto out = testing_util::RunBatch(
      stub_.get(), {testing_util::Item(kValid, long_id),
                    testing_util::Item("1HGCM82643A004352", "digit")});
  ASSERT_TRUE(out.status.ok()) << out.status.error_message();
  std::map<std::string, std::string> reasons;
  for (const auto& ev : out.events) {
    if (ev.has_failed()) {
      reasons[ev.request_id().substr(0, 5)] = ev.failed().reason_detail();
    }
  }
  EXPECT_EQ(reasons["rrrrr"], "FIELD_TOO_LONG");
  EXPECT_EQ(reasons["digit"], "INVALID_VIN_CHECK_DIGIT");

  const HttpResponse r = HttpCall(
      port_, "POST", "/v1/decode:batch",
      absl::StrCat(
          "{\"vin\":\"", kValid, "\",\"requestId\":\"", long_id,
          "\"}\n{\"vin\":\"1HGCM82643A004352\",\"requestId\":\"digit\"}\n"
          "not json\n"),
      {"Content-Type: application/x-ndjson"});
  ASSERT_EQ(r.status, 200) << r.body;
  std::vector<std::string> seen;
  std::istringstream lines(r.body);
  for (std::string line; std::getline(lines, line);) {
    const Json ev = Json::parse(line, nullptr, false);
    if (ev.contains("failed"))
      seen.push_back(ev["failed"].value("reasonDetail", ""));
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"FIELD_TOO_LONG",
                                            "INVALID_VIN_CHECK_DIGIT",
                                            "MALFORMED_REQUEST"}))
      << r.body;
}

// The gateway's own refusals on /v1/* are google.rpc.Status too; elsewhere
// vPIC's shape, with the reason.
TEST_F(HttpGatewayTest, TheGatewaysOwnRefusalsNameTheirReason) {
  ServerOptions o = Defaults();
  o.http.decode_body_limit = 1024;
  StartHttp(o);
  struct Refusal {
    std::string method, path, body;
    std::vector<std::string> headers;
    int http;
    std::string reason;
    bool api;
    int grpc_code = 0;  // of the google.rpc.Status when `api`
  };
  for (const Refusal& c : std::vector<Refusal>{
           {"GET", "/v1/nothing", "", {}, 404, "NOT_FOUND", true, 5},
           {"GET", "/nothing", "", {}, 404, "NOT_FOUND", false},
           {"GET", "/v1/decode", "", {}, 405, "METHOD_NOT_ALLOWED", true, 12},
           {"POST",
            "/v1/decode",
            "not json",
            {},
            400,
            "MALFORMED_REQUEST",
            true,
            3},
           {"POST",
            "/v1/decode",
            std::string(2048, ' '),
            {},
            413,
            "BODY_TOO_LARGE",
            true,
            3},
           {"POST",
            "/v1/decode",
            "{}",
            {"Origin: http://elsewhere.example"},
            403,
            "FORBIDDEN_ORIGIN",
            true,
            7},
           {"GET",
            "/api/vehicles/GetNothing/x",
            "",
            {},
            404,
            "NOT_FOUND",
            false},
       }) {
    const HttpResponse r = HttpCall(port_, c.method, c.path, c.body, c.headers);
    EXPECT_EQ(r.status, c.http) << c.method << " " << c.path << ": " << r.body;
    const Json j = Body(r);
    if (c.api) {
      EXPECT_EQ(j.value("code", -1), c.grpc_code) << c.path << ": " << r.body;
      EXPECT_EQ(ReadJson(j).reason, c.reason) << c.path << ": " << r.body;
    } else {
      EXPECT_EQ(j["error"].value("reason", ""), c.reason)
          << c.path << ": " << r.body;
      EXPECT_EQ(j["error"].value("code", 0), c.http) << r.body;
    }
  }
}

// Every reason has one published name, read back to itself, and the
// README lists it.
TEST(ErrorReasonNames, AreUniqueStableAndListedInTheReadme) {
  std::ifstream in(VIN_SOURCE_DIR "/README.md");
  std::stringstream readme;
  readme << in.rdbuf();
  ASSERT_FALSE(readme.str().empty());
  std::set<std::string> names;
  for (size_t i = 1; i < domain::kErrorReasons; ++i) {
    const auto reason = static_cast<domain::ErrorReason>(i);
    const std::string name(domain::ErrorReasonName(reason));
    ASSERT_FALSE(name.empty()) << i;
    EXPECT_TRUE(names.insert(name).second) << name << " twice";
    EXPECT_EQ(domain::ErrorReasonNamed(name), reason) << name;
    EXPECT_NE(readme.str().find(absl::StrCat("`", name, "`")),
              std::string::npos)
        << "README does not list " << name;
  }
  EXPECT_EQ(domain::ErrorReasonNamed("NO_SUCH_REASON"), absl::nullopt);
  EXPECT_EQ(domain::ErrorReasonNamed(""), absl::nullopt);
}

}  // namespace
}  // namespace server

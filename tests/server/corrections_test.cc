// Rule 21: an invalid VIN gets the snapshot's corrections, the same list
// everywhere a caller reads a refusal: BadRequest field violations of the
// INVALID_ARGUMENT (the VIN first in each description), the google.rpc.Status
// of a 400 from POST /v1/decode, FailedEvent.suggested_vins in a stream; on
// vPIC's paths the VIN is answered 200 as vPIC answers it (the snapshot's
// decode, ErrorCode, SuggestedVIN, PossibleValues). Nothing reaches vPIC,
// and a suggestion is never decoded unasked.
#include <grpcpp/grpcpp.h>

#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testing/http_client.h"
#include "testing/server_fixture.h"

namespace {

using server::ServerOptions;

constexpr char kVin[] = "1FTMW1T88MFA00001";       // the captured fixture's
constexpr char kTypo[] = "1FTMW1T88MFA0O001";      // an O for position 14's 0
constexpr char kBadCheck[] = "1FTMW1T87MFA00001";  // a wrong check digit

class CorrectionsTest : public testing_util::ServerFixture {
 protected:
  static ServerOptions WithSnapshot(int per_second = 200) {
    ServerOptions o = Defaults();
    o.snapshot_path = VIN_SNAPSHOT_PATH;
    o.engine.suggestions_per_second = per_second;
    o.http.listen = "127.0.0.1:0";
    return o;
  }

  // The suggestions of a refused unary Decode, read from its BadRequest.
  std::vector<std::string> UnarySuggestions(const std::string& vin) {
    vin::v1::DecodeResponse resp;
    const grpc::Status s = Decode(vin, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << vin;
    google::rpc::Status details;
    EXPECT_TRUE(details.ParseFromString(s.error_details()));
    std::vector<std::string> out;
    for (const auto& any : details.details()) {
      google::rpc::BadRequest bad;
      if (!any.UnpackTo(&bad)) continue;
      // The first violation is the rule broken; then one per suggestion.
      for (int i = 1; i < bad.field_violations_size(); ++i) {
        const auto& v = bad.field_violations(i);
        EXPECT_EQ(v.field(), "vin");
        const std::string first = v.description().substr(0, 17);
        EXPECT_TRUE(absl::StartsWith(v.description(), first + ": did you mean"))
            << v.description();
        out.push_back(first);
      }
    }
    return out;
  }
};

TEST_F(CorrectionsTest, AnInvalidVinGetsItsCorrectionsAsFieldViolations) {
  StartServer(WithSnapshot());
  const std::vector<std::string> typo = UnarySuggestions(kTypo);
  ASSERT_FALSE(typo.empty());
  EXPECT_EQ(typo.front(), kVin) << "the O read as the 0 it stands for";
  EXPECT_LE(typo.size(), 5u);
  for (const std::string& s : typo) {
    int differ = 0;
    for (size_t i = 0; i < 17; ++i) differ += s[i] != kTypo[i];
    EXPECT_EQ(differ, 1) << s;
  }
  const std::vector<std::string> check = UnarySuggestions(kBadCheck);
  EXPECT_NE(std::find(check.begin(), check.end(), kVin), check.end());
  // A VIN of another length gets none; nothing was decoded or sent.
  EXPECT_TRUE(UnarySuggestions("1FTMW1T88MFA0000").empty());
  EXPECT_EQ(fake_->TotalRequests(), 0);
}

TEST_F(CorrectionsTest, TheSameListInAStreamAndInTheJsonApi) {
  StartServer(WithSnapshot());
  const std::vector<std::string> expected = UnarySuggestions(kTypo);
  ASSERT_FALSE(expected.empty());
  grpc::ClientContext ctx;
  auto stream = stub_->DecodeBatch(&ctx);
  vin::v1::DecodeBatchRequest item;
  item.set_vin(kTypo);
  ASSERT_TRUE(stream->Write(item));
  stream->WritesDone();
  vin::v1::DecodeBatchResponse event;
  std::vector<std::string> streamed;
  int failed = 0;
  while (stream->Read(&event)) {
    if (!event.has_failed()) continue;
    ++failed;
    EXPECT_EQ(event.failed().reason_detail(), "INVALID_VIN_CHARACTER");
    streamed.assign(event.failed().suggested_vins().begin(),
                    event.failed().suggested_vins().end());
  }
  ASSERT_TRUE(stream->Finish().ok());
  EXPECT_EQ(failed, 1);
  EXPECT_EQ(streamed, expected);

  const testing_util::HttpResponse r =
      testing_util::HttpCall(server_->http_port(), "POST", "/v1/decode",
                             absl::StrCat("{\"vin\":\"", kTypo, "\"}"),
                             {"Content-Type: application/json"});
  ASSERT_EQ(r.status, 400) << r.body;
  const nlohmann::json j = nlohmann::json::parse(r.body);
  std::vector<std::string> from_json;
  for (const auto& d : j["details"]) {
    if (d["@type"] != "type.googleapis.com/google.rpc.BadRequest") continue;
    const auto& v = d["fieldViolations"];
    for (size_t i = 1; i < v.size(); ++i) {
      from_json.push_back(v[i]["description"].get<std::string>().substr(0, 17));
    }
  }
  EXPECT_EQ(from_json, expected) << r.body;
  EXPECT_EQ(fake_->TotalRequests(), 0);
}

TEST_F(CorrectionsTest, VpicsPathsAnswerAnInvalidVinAsVpicDoes) {
  StartServer(WithSnapshot());
  const std::vector<std::string> suggested = UnarySuggestions(kTypo);
  ASSERT_FALSE(suggested.empty());
  const testing_util::HttpResponse r = testing_util::HttpGet(
      server_->http_port(),
      absl::StrCat("/api/vehicles/DecodeVinValues/", kTypo, "?format=json"));
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Header("X-Vin-Source"), "snapshot");
  const nlohmann::json v = nlohmann::json::parse(r.body)["Results"][0];
  EXPECT_EQ(v["VIN"], kTypo);
  EXPECT_EQ(v["Make"], "FORD") << "the snapshot's decode of the VIN as sent";
  const std::vector<std::string> codes =
      absl::StrSplit(v["ErrorCode"].get<std::string>(), ',');
  EXPECT_NE(std::find(codes.begin(), codes.end(), "400"), codes.end()) << v;
  EXPECT_TRUE(absl::StrContains(v["ErrorText"].get<std::string>(),
                                "400 - Invalid Characters Present"));
  EXPECT_TRUE(absl::StrContains(v["AdditionalErrorText"].get<std::string>(),
                                "Invalid character(s): 14:O"))
      << v["AdditionalErrorText"];
  // vPIC's correction fields, as its spVinDecode_ErrorCode writes them.
  std::map<int, std::string> positions;
  for (const std::string& s : suggested) {
    for (int i = 0; i < 17; ++i) {
      if (s[i] != kTypo[i]) positions[i + 1].push_back(s[i]);
    }
  }
  std::string possible;
  for (auto& [p, chars] : positions) {
    std::sort(chars.begin(), chars.end());
    absl::StrAppend(&possible, "(", p, ":", chars, ")");
  }
  EXPECT_EQ(v["PossibleValues"], possible);
  if (suggested.size() == 1) {
    EXPECT_NE(std::find(codes.begin(), codes.end(), "3"), codes.end()) << v;
    EXPECT_EQ(v["SuggestedVIN"], kVin);
  } else {
    std::string marked = kTypo;
    for (const auto& [p, chars] : positions) marked[p - 1] = '!';
    EXPECT_EQ(v["SuggestedVIN"], marked);
    EXPECT_NE(std::find(codes.begin(), codes.end(),
                        positions.size() == 1 ? "4" : "5"),
              codes.end())
        << v;
  }
  // The codes stay in vPIC's ascending order.
  std::vector<int> numbers;
  for (const std::string& c : codes) numbers.push_back(std::stoi(c));
  EXPECT_TRUE(std::is_sorted(numbers.begin(), numbers.end())) << v["ErrorCode"];

  // In a batch, the invalid VIN is answered in its place; the valid one is
  // decoded.
  Script(kVin, "ok");
  const testing_util::HttpResponse batch = testing_util::HttpCall(
      server_->http_port(), "POST", "/api/vehicles/DecodeVINValuesBatch/",
      absl::StrCat("format=json&data=", kVin, ";", kBadCheck));
  ASSERT_EQ(batch.status, 200) << batch.body;
  const nlohmann::json b = nlohmann::json::parse(batch.body)["Results"];
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0]["ErrorCode"], "0");
  const std::vector<std::string> bad_codes =
      absl::StrSplit(b[1]["ErrorCode"].get<std::string>(), ',');
  EXPECT_NE(std::find(bad_codes.begin(), bad_codes.end(), "1"), bad_codes.end())
      << b[1]["ErrorCode"];
  EXPECT_EQ(batch.Header("X-Vin-Source"), "vpic,snapshot");
  EXPECT_EQ(fake_->TotalRequests(), 1) << "only the valid VIN";
  EXPECT_EQ(fake_->RequestCount(kBadCheck), 0);
}

TEST_F(CorrectionsTest, PastTheBudgetARefusalComesWithoutSuggestions) {
  StartServer(WithSnapshot(/*per_second=*/0));
  EXPECT_TRUE(UnarySuggestions(kTypo).empty());
}

// LIVE_ONLY means never the snapshot: an invalid VIN on vPIC's paths gets
// the 400 of a server without one.
TEST_F(CorrectionsTest, LiveOnlyKeepsVpicsPathsFromTheSnapshot) {
  StartServer(WithSnapshot());
  const testing_util::HttpResponse r = testing_util::HttpGet(
      server_->http_port(),
      absl::StrCat("/api/vehicles/DecodeVinValues/", kTypo, "?format=json"),
      {"X-Vin-Source-Preference: live_only"});
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(fake_->TotalRequests(), 0);
}

}  // namespace

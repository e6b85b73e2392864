// Rule 21 on the service's own APIs: explain fills each answer's provenance
// (the snapshot's patterns, or "vpic" for a live answer) for the callers
// that ask, and only for them; a live answer whose model year vPIC calls
// uncertain carries both readings of position 10; an 18-character barcode
// read (a leading I) is decoded as the 17 after it, with a note.
#include <grpcpp/grpcpp.h>

#include <set>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testing/http_client.h"
#include "testing/server_fixture.h"

namespace {

using server::ServerOptions;

constexpr char kVin[] = "1FTMW1T88MFA00001";  // the captured fixture's

class ExplainTest : public testing_util::ServerFixture {
 protected:
  static ServerOptions WithSnapshot() {
    ServerOptions o = Defaults();
    o.snapshot_path = VIN_SNAPSHOT_PATH;
    o.engine.cache_capacity = 0;
    o.engine.attempt_timeout = absl::Seconds(60);
    o.http.listen = "127.0.0.1:0";
    return o;
  }

  static vin::v1::DecodeRequest Request(const std::string& vin, bool explain,
                                        vin::v1::SourcePreference source) {
    vin::v1::DecodeRequest req;
    req.set_vin(vin);
    req.set_explain(explain);
    req.set_source_preference(source);
    return req;
  }

  static std::set<std::string> Explained(const vin::v1::DecodeResult& r) {
    std::set<std::string> names;
    for (const auto& f : r.provenance()) names.insert(f.variable());
    return names;
  }

  static std::set<std::string> Attributes(const vin::v1::DecodeResult& r) {
    std::set<std::string> names;
    for (const auto& [name, value] : r.vehicle().attributes()) {
      names.insert(name);
    }
    return names;
  }

  static bool HasNote(const vin::v1::DecodeResult& r, const std::string& code) {
    for (const auto& n : r.notes()) {
      if (n.code() == code) return true;
    }
    return false;
  }
};

TEST_F(ExplainTest, ASnapshotAnswerNamesThePatternOfEachVariable) {
  StartServer(WithSnapshot());
  vin::v1::DecodeResponse resp;
  ASSERT_TRUE(
      Decode(Request(kVin, true, vin::v1::SOURCE_PREFERENCE_SNAPSHOT_ONLY),
             &resp)
          .ok());
  const vin::v1::DecodeResult& r = resp.result();
  EXPECT_EQ(r.source(), vin::v1::SOURCE_SNAPSHOT);
  EXPECT_EQ(Explained(r), Attributes(r));
  bool model_pattern = false;
  for (const auto& f : r.provenance()) {
    EXPECT_FALSE(f.source().empty()) << f.variable();
    EXPECT_NE(f.source(), "vpic") << f.variable();
    if (f.variable() == "Model" && f.source() == "pattern") {
      model_pattern =
          f.schema_id() > 0 && f.pattern_id() > 0 && !f.key().empty();
    }
  }
  EXPECT_TRUE(model_pattern) << r.DebugString();
  // A caller that does not ask gets none (the same shared answer).
  vin::v1::DecodeResponse plain;
  ASSERT_TRUE(
      Decode(Request(kVin, false, vin::v1::SOURCE_PREFERENCE_SNAPSHOT_ONLY),
             &plain)
          .ok());
  EXPECT_EQ(plain.result().provenance_size(), 0);
  EXPECT_EQ(Attributes(plain.result()), Attributes(r));
}

TEST_F(ExplainTest, ALiveAnswerSaysVpicForEveryVariable) {
  StartServer(WithSnapshot());
  Script(kVin, "ok");
  vin::v1::DecodeResponse resp;
  ASSERT_TRUE(
      Decode(Request(kVin, true, vin::v1::SOURCE_PREFERENCE_LIVE_ONLY), &resp)
          .ok());
  const vin::v1::DecodeResult& r = resp.result();
  ASSERT_EQ(r.source(), vin::v1::SOURCE_VPIC);
  EXPECT_EQ(Explained(r), Attributes(r));
  EXPECT_GT(r.provenance_size(), 10);
  for (const auto& f : r.provenance()) {
    EXPECT_EQ(f.source(), "vpic") << f.variable();
    EXPECT_EQ(f.schema_id(), 0);
    EXPECT_EQ(f.pattern_id(), 0);
  }
  // The fixture's year is certain (position 7 of a light truck).
  EXPECT_EQ(r.model_year_candidates_size(), 0);
}

// With the cache on: the one live answer, shared, is explained only for
// the caller that asks, before and after.
TEST_F(ExplainTest, ACachedAnswerIsExplainedOnlyForTheCallerThatAsks) {
  ServerOptions o = WithSnapshot();
  o.engine.cache_capacity = 100;
  StartServer(o);
  Script(kVin, "ok");
  vin::v1::DecodeResponse first, explained, after;
  ASSERT_TRUE(
      Decode(Request(kVin, false, vin::v1::SOURCE_PREFERENCE_LIVE_ONLY), &first)
          .ok());
  ASSERT_TRUE(Decode(Request(kVin, true, vin::v1::SOURCE_PREFERENCE_LIVE_ONLY),
                     &explained)
                  .ok());
  ASSERT_TRUE(
      Decode(Request(kVin, false, vin::v1::SOURCE_PREFERENCE_LIVE_ONLY), &after)
          .ok());
  EXPECT_EQ(fake_->TotalRequests(), 1);
  EXPECT_EQ(first.result().provenance_size(), 0);
  EXPECT_EQ(explained.result().source(), vin::v1::SOURCE_CACHE);
  EXPECT_EQ(Explained(explained.result()), Attributes(explained.result()));
  for (const auto& f : explained.result().provenance()) {
    EXPECT_EQ(f.source(), "vpic") << f.variable();
  }
  EXPECT_EQ(after.result().provenance_size(), 0);
  EXPECT_EQ(Attributes(after.result()), Attributes(first.result()));
}

TEST_F(ExplainTest, VpicsUncertainYearGivesBothReadingsOfPositionTen) {
  StartServer(WithSnapshot());
  Script(kVin,
         "set:AdditionalErrorText=The Model Year decoded for this VIN may be "
         "incorrect. If you know the Model year please enter it");
  vin::v1::DecodeResponse resp;
  ASSERT_TRUE(
      Decode(Request(kVin, false, vin::v1::SOURCE_PREFERENCE_LIVE_ONLY), &resp)
          .ok());
  const vin::v1::DecodeResult& r = resp.result();
  ASSERT_EQ(r.vehicle().model_year(), 2021);
  ASSERT_EQ(r.model_year_candidates_size(), 2) << r.DebugString();
  EXPECT_EQ(r.model_year_candidates(0).model_year(), 2021);
  EXPECT_EQ(r.model_year_candidates(0).rule(), "vpic");
  EXPECT_TRUE(r.model_year_candidates(0).chosen());
  EXPECT_EQ(r.model_year_candidates(1).model_year(), 1991);  // 'M' again
  EXPECT_EQ(r.model_year_candidates(1).rule(), "30_year_cycle");
  EXPECT_FALSE(r.model_year_candidates(1).chosen());
}

TEST_F(ExplainTest, ABarcodeReadIsDecodedAsTheSeventeenAfterItsI) {
  StartServer(WithSnapshot());
  Script(kVin, "ok");
  const std::string scanned = std::string("I") + kVin;
  vin::v1::DecodeResponse resp;
  const grpc::Status s = Decode(
      Request(scanned, false, vin::v1::SOURCE_PREFERENCE_LIVE_ONLY), &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(resp.result().vin(), kVin);
  EXPECT_EQ(resp.result().vehicle().make(), "FORD");
  ASSERT_TRUE(HasNote(resp.result(), "barcode")) << resp.DebugString();
  EXPECT_EQ(fake_->TotalRequests(), 1);

  // In a stream, with explain: the DONE carries both, and the item's VIN.
  grpc::ClientContext ctx;
  auto stream = stub_->DecodeBatch(&ctx);
  vin::v1::DecodeBatchRequest item;
  item.set_request_id("scan");
  item.set_vin(scanned);
  item.set_explain(true);
  item.set_source_preference(vin::v1::SOURCE_PREFERENCE_SNAPSHOT_ONLY);
  ASSERT_TRUE(stream->Write(item));
  stream->WritesDone();
  vin::v1::DecodeBatchResponse event;
  vin::v1::DecodeResult done;
  std::string event_vin;
  while (stream->Read(&event)) {
    if (event.has_done()) {
      done = event.done().result();
      event_vin = event.vin();
    }
    EXPECT_FALSE(event.has_failed()) << event.DebugString();
  }
  ASSERT_TRUE(stream->Finish().ok());
  EXPECT_EQ(event_vin, kVin);
  EXPECT_EQ(done.vin(), kVin);
  EXPECT_TRUE(HasNote(done, "barcode"));
  EXPECT_EQ(Explained(done), Attributes(done));
  EXPECT_GT(done.provenance_size(), 10);

  // A scan whose 17 are not a VIN fails as those 17 do.
  vin::v1::DecodeResponse bad;
  const grpc::Status refused =
      Decode(Request("I1FTMW1T88MFAOOOO1", false,
                     vin::v1::SOURCE_PREFERENCE_LIVE_ONLY),
             &bad);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(fake_->TotalRequests(), 1);
}

TEST_F(ExplainTest, TheJsonApiExplainsOnAskingInTheQuery) {
  StartServer(WithSnapshot());
  const int port = server_->http_port();
  const std::string body =
      std::string("{\"vin\":\"") + kVin +
      "\",\"sourcePreference\":\"SOURCE_PREFERENCE_SNAPSHOT_ONLY\"}";
  const testing_util::HttpResponse explained =
      testing_util::HttpCall(port, "POST", "/v1/decode?explain=true", body,
                             {"Content-Type: application/json"});
  ASSERT_EQ(explained.status, 200) << explained.body;
  const nlohmann::json j = nlohmann::json::parse(explained.body);
  ASSERT_TRUE(j["result"].contains("provenance")) << explained.body;
  std::set<std::string> explained_names, attributes;
  for (const auto& f : j["result"]["provenance"]) {
    explained_names.insert(f["variable"].get<std::string>());
    EXPECT_TRUE(f.contains("source")) << f.dump();
  }
  for (const auto& [name, value] :
       j["result"]["vehicle"]["attributes"].items()) {
    attributes.insert(name);
  }
  EXPECT_EQ(explained_names, attributes);
  EXPECT_GT(attributes.size(), 10u);
  const testing_util::HttpResponse plain = testing_util::HttpCall(
      port, "POST", "/v1/decode", body, {"Content-Type: application/json"});
  ASSERT_EQ(plain.status, 200);
  EXPECT_FALSE(absl::StrContains(plain.body, "provenance"));
  const testing_util::HttpResponse bad =
      testing_util::HttpCall(port, "POST", "/v1/decode?explain=maybe", body,
                             {"Content-Type: application/json"});
  EXPECT_EQ(bad.status, 400);
  EXPECT_TRUE(absl::StrContains(bad.body, "explain")) << bad.body;
}

}  // namespace

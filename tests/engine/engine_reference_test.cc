// Rule 18 in the engine: vPIC's reference requests (GetAllMakes,
// GetModelsForMake, ...) are flights like decodes: one upstream request per
// distinct request among concurrent callers, never batched with VINs,
// retried by the same rules, their answers (vPIC's JSON documents) cached.
#include <string>

#include "engine_rules_fixture.h"
#include "gtest/gtest.h"
#include "testing/vin_gen.h"

namespace engine {
namespace {

constexpr char kModels[] =
    R"({"Count":2,"Message":"Response returned successfully",)"
    R"("SearchCriteria":"Make:honda","Results":[)"
    R"({"Make_ID":474,"Make_Name":"HONDA","Model_ID":1861,"Model_Name":"Accord"},)"
    R"({"Make_ID":474,"Make_Name":"HONDA","Model_ID":1863,"Model_Name":"Civic"}]})";

class EngineReferenceTest : public EngineRulesTest {
 protected:
  testing_util::RecordingListener* Ask(const std::string& reference) {
    DecodeRequest r;
    r.reference = reference;
    return Submit(r);
  }
  static vpic::HttpResult Document(std::string body = kModels) {
    vpic::HttpResult r;
    r.http_status = 200;
    r.body = std::move(body);
    return r;
  }
  // The document the caller of `l` was answered, or "" when it was not.
  static std::string DocumentOf(const testing_util::RecordingListener& l) {
    const auto events = l.events();
    if (events.empty() || events.back().kind != "done") return "";
    const auto& result = events.back().result;
    return result->document != nullptr ? *result->document : "";
  }
};

TEST_F(EngineReferenceTest, FiftyCallersMakeOneRequestAndAllGetTheDocument) {
  Make(Options());
  std::vector<testing_util::RecordingListener*> callers;
  for (int i = 0; i < 50; ++i) callers.push_back(Ask("GetModelsForMake/honda"));
  Turn();
  ASSERT_EQ(Sent(), 1u);
  EXPECT_EQ(upstream_->sent()[0].reference, "GetModelsForMake/honda");
  EXPECT_TRUE(upstream_->sent()[0].entries.empty());
  Answer(1, Document());
  for (auto* c : callers) {
    EXPECT_EQ(DocumentOf(*c), kModels);
    EXPECT_EQ(c->events().back().result->source, Source::kVpic);
  }
  EXPECT_EQ(engine_->Stats().upstream_requests, 1u);
  EXPECT_EQ(engine_->Stats().upstream_vins, 0u) << "a reference carries none";
  // A second ask is the cache's answer: no request.
  auto* again = Ask("GetModelsForMake/honda");
  Turn();
  EXPECT_EQ(Sent(), 1u);
  EXPECT_EQ(DocumentOf(*again), kModels);
  EXPECT_EQ(again->events().back().result->source, Source::kCache);
  // Another request is another flight.
  Ask("GetModelsForMake/ford");
  Turn();
  EXPECT_EQ(Sent(), 2u);
  Answer(2, Document());
  EXPECT_TRUE(Idle());
}

TEST_F(EngineReferenceTest, AReferenceIsNeverBatchedWithVins) {
  EngineOptions o = Options();
  o.upstream_batch_max = 50;
  o.max_upstream_concurrency = 1;  // everything queues behind the first
  Make(o);
  auto* first = Submit("1HGCM82633A004352");
  Turn();
  ASSERT_EQ(Sent(), 1u);
  auto* makes = Ask("GetAllMakes");
  auto* a = Submit(testing_util::ValidVin(1));
  auto* b = Submit(testing_util::ValidVin(2));
  Turn();
  AnswerOk(1);
  Turn();
  // The next requests: the reference alone, then the two VINs together
  // (or the VINs first): never the reference with a VIN.
  ASSERT_EQ(Sent(), 2u);
  const auto& second = upstream_->sent()[1];
  if (second.reference.empty()) {
    EXPECT_EQ(second.entries.size(), 2u);
    AnswerOk(2);
    Turn();
    ASSERT_EQ(Sent(), 3u);
    EXPECT_EQ(upstream_->sent()[2].reference, "GetAllMakes");
    Answer(3, Document());
  } else {
    EXPECT_EQ(second.reference, "GetAllMakes");
    EXPECT_TRUE(second.entries.empty());
    Answer(2, Document());
    Turn();
    ASSERT_EQ(Sent(), 3u);
    EXPECT_EQ(upstream_->sent()[2].entries.size(), 2u);
    AnswerOk(3);
  }
  EXPECT_EQ(first->kinds().back(), "done");
  EXPECT_EQ(DocumentOf(*makes), kModels);
  EXPECT_EQ(a->kinds().back(), "done");
  EXPECT_EQ(b->kinds().back(), "done");
  EXPECT_EQ(engine_->Stats().upstream_batch_requests, 1u);
}

// A 503 is retried, and an answer that is not a vPIC document (a maintenance
// page with 200) too; an empty Results is an answer, never retried.
TEST_F(EngineReferenceTest, RetriedAsDecodesAreAndAnEmptyResultsIsAnAnswer) {
  Make(Options());
  auto* c = Ask("GetModelsForMake/nosuchmake");
  Turn();
  Answer(1, Status(503));
  Step(kCap);
  ASSERT_EQ(Sent(), 2u);
  Answer(2, Document("<html>down for maintenance</html>"));
  Step(kCap);
  ASSERT_EQ(Sent(), 3u);
  const std::string empty =
      R"({"Count":0,"Message":"Response returned successfully",)"
      R"("SearchCriteria":"Make:nosuchmake","Results":[]})";
  Answer(3, Document(empty));
  EXPECT_EQ(c->kinds(), (std::vector<std::string>{"queued", "retrying",
                                                   "retrying", "done"}));
  EXPECT_EQ(c->events()[2].retrying.error.kind, "bad_response");
  EXPECT_EQ(DocumentOf(*c), empty);
  Step(kCap);
  EXPECT_EQ(Sent(), 3u);
  EXPECT_TRUE(Idle());
}

// Rejected (a 404 from vPIC) is a failure of that request, not retried.
TEST_F(EngineReferenceTest, ARejectionFailsTheCallersOnce) {
  Make(Options());
  auto* c = Ask("GetParts?type=565&fromdate=1/1/2015&todate=5/5/2015");
  Turn();
  Answer(1, Status(404));
  ASSERT_EQ(c->kinds().back(), "failed");
  EXPECT_EQ(c->events().back().failure.reason, FailureReason::kUpstreamRejected);
  Step(kCap);
  EXPECT_EQ(Sent(), 1u);
}

}  // namespace
}  // namespace engine

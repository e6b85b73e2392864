// DecodeVINValuesBatch: the request body, parsing the captured answer, and
// classifying each VIN of a batch attempt as a single attempt would be.
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vpic/classify.h"
#include "vpic/client.h"
#include "vpic/parse.h"

namespace vpic {
namespace {

using Json = nlohmann::ordered_json;
using testing::HasSubstr;
using Verdict = Outcome::Verdict;
const absl::Time kNow = absl::FromUnixSeconds(1700000000);

// The captured answer of vPIC's batch endpoint (two VINs).
std::string CapturedBatchBody() {
  std::ifstream in(std::string(VIN_FIXTURE_DIR) + "/decode-vin-batch.json");
  std::stringstream text;
  text << in.rdbuf();
  return Json::parse(text.str())["body"].dump();
}

// A single-VIN answer holding one of the captured batch results.
std::string SingleBody(const Json& result) {
  Json body = {{"Count", result.size()},
               {"Message", "Results returned successfully."},
               {"SearchCriteria", "VIN(s): X"},
               {"Results", Json::array({result})}};
  return body.dump();
}

HttpResult Ok(std::string body) {
  HttpResult r;
  r.http_status = 200;
  r.body = std::move(body);
  return r;
}

TEST(BatchRequest, UrlAndFormEncodedBody) {
  EXPECT_EQ(DecodeVinValuesBatchUrl("http://h/api/vehicles/"),
            "http://h/api/vehicles/DecodeVINValuesBatch/");
  EXPECT_EQ(DecodeVinValuesBatchBody({{"1FTMW1T88MFA00001", 0},
                                      {"5UXWX7C5XBA000001", 2011}}),
            "format=json&data=1FTMW1T88MFA00001%3B5UXWX7C5XBA000001%2C2011");
  EXPECT_EQ(DecodeVinValuesBatchBody({{"A*B", 0}}), "format=json&data=A%2AB");
}

TEST(ParseBatch, TheCapturedAnswerGivesOneResultPerVin) {
  auto results = ParseDecodeVinValuesBatch(CapturedBatchBody());
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(results->size(), 2u);
  EXPECT_EQ((*results)[0].vin, "5UXWX7C5*BA");
  ASSERT_TRUE((*results)[0].decoded.ok());
  EXPECT_EQ((*results)[0].decoded->vehicle.make, "BMW");
  EXPECT_EQ((*results)[0].decoded->vehicle.model, "X3");
  EXPECT_EQ((*results)[0].decoded->vehicle.model_year, 2011);
  EXPECT_EQ((*results)[1].vin, "5YJSA3DS*EF");
  EXPECT_EQ((*results)[1].decoded->vehicle.make, "TESLA");
  std::vector<std::string> codes;
  for (const Note& n : (*results)[1].decoded->notes) codes.push_back(n.code);
  EXPECT_THAT(codes, testing::ElementsAre("5", "6", "14"));
}

TEST(ParseBatch, EachResultParsesExactlyAsTheSingleEndpointWould) {
  const Json batch = Json::parse(CapturedBatchBody());
  auto results = ParseDecodeVinValuesBatch(batch.dump());
  ASSERT_TRUE(results.ok());
  for (size_t i = 0; i < results->size(); ++i) {
    auto single = ParseDecodeVinValues(SingleBody(batch["Results"][i]));
    ASSERT_TRUE(single.ok());
    EXPECT_EQ((*results)[i].decoded->vehicle.attributes,
              single->vehicle.attributes);
    EXPECT_EQ((*results)[i].decoded->notes, single->notes);
  }
}

TEST(ParseBatch, NotVpicJsonIsAnErrorOfTheWholeAnswer) {
  for (const char* body : {"", "<html>maintenance</html>", "[]",
                           R"({"Results": {}})", R"({"Results": []})"}) {
    auto r = ParseDecodeVinValuesBatch(body);
    EXPECT_FALSE(r.ok()) << body;
    EXPECT_THAT(std::string(r.status().message()),
                HasSubstr("DecodeVINValuesBatch")) << body;
  }
}

TEST(ClassifyBatch, ResultsAreMatchedByVinNotByPosition) {
  Json batch = Json::parse(CapturedBatchBody());
  batch["Results"][0]["VIN"] = " 5uxwx7c5*ba ";  // trimmed, upper-cased
  const std::vector<std::string> vins = {"5YJSA3DS*EF", "5UXWX7C5*BA"};
  std::vector<Outcome> out = ClassifyBatch(Ok(batch.dump()), kNow, vins);
  ASSERT_EQ(out.size(), 2u);
  ASSERT_EQ(out[0].verdict, Verdict::kDecoded);
  EXPECT_EQ(out[0].decoded.vehicle.make, "TESLA");
  ASSERT_EQ(out[1].verdict, Verdict::kDecoded);
  EXPECT_EQ(out[1].decoded.vehicle.make, "BMW");
}

TEST(ClassifyBatch, AVinMissingFromTheAnswerIsABadResponseForItAlone) {
  const std::vector<std::string> vins = {"5UXWX7C5*BA", "1FTMW1T88MFA00001",
                                         "5YJSA3DS*EF"};
  std::vector<Outcome> out = ClassifyBatch(Ok(CapturedBatchBody()), kNow, vins);
  EXPECT_EQ(out[0].verdict, Verdict::kDecoded);
  ASSERT_EQ(out[1].verdict, Verdict::kRetry);
  EXPECT_EQ(out[1].error.kind, "bad_response");
  EXPECT_THAT(out[1].error.message, HasSubstr("1FTMW1T88MFA00001"));
  EXPECT_EQ(out[2].verdict, Verdict::kDecoded);
}

TEST(ClassifyBatch, AFailureOfTheWholeRequestIsEveryVinsAttempt) {
  const std::vector<std::string> vins = {"A", "B"};
  HttpResult busy;
  busy.http_status = 429;
  busy.retry_after = "2";
  HttpResult gone;
  gone.http_status = 404;
  HttpResult reset;
  reset.transport = Transport::kReset;
  reset.transport_message = "Connection reset by peer";
  struct Case {
    HttpResult r;
    Verdict want;
    const char* kind;
  } cases[] = {{busy, Verdict::kRetry, "http"},
               {gone, Verdict::kReject, "http"},
               {reset, Verdict::kRetry, "reset"},
               {Ok("<html>down</html>"), Verdict::kRetry, "bad_response"}};
  for (const Case& c : cases) {
    std::vector<Outcome> out = ClassifyBatch(c.r, kNow, vins);
    ASSERT_EQ(out.size(), 2u);
    for (const Outcome& o : out) {
      EXPECT_EQ(o.verdict, c.want) << c.kind;
      EXPECT_EQ(o.error.kind, c.kind);
    }
  }
  EXPECT_EQ(ClassifyBatch(busy, kNow, vins)[1].retry_after, absl::Seconds(2));
}

}  // namespace
}  // namespace vpic

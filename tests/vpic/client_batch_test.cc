// DecodeVINValuesBatch through the real libcurl client and the fake vPIC
// over loopback HTTP: one POST for many VINs, per-VIN and batch-wide
// scripts.
#include <string>
#include <vector>

#include "client_test_fixture.h"
#include "fake_vpic/fake_vpic.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vpic/client.h"

namespace vpic {
namespace {

using fakevpic::Step;

class BatchClientTest : public ClientTest {
 protected:
  HttpResult FetchBatch(const std::vector<BatchEntry>& entries) {
    bool done = false;
    HttpResult out;
    client_->StartBatch(entries, [&](HttpResult r) {
      out = std::move(r);
      done = true;
    });
    const absl::Time give_up = absl::Now() + absl::Seconds(20);
    while (!done && absl::Now() < give_up) loop_->RunOnce(absl::Milliseconds(100));
    EXPECT_TRUE(done);
    return out;
  }
  static std::vector<std::string> VinsOf(const std::vector<BatchEntry>& es) {
    std::vector<std::string> out;
    for (const auto& e : es) out.push_back(e.vin);
    return out;
  }
};

constexpr char kHonda[] = "1HGCM82633A004352";
constexpr char kBuick[] = "1G4AH59H45G118341";

TEST_F(BatchClientTest, OnePostCarriesEveryVinAndEachGetsItsResult) {
  const std::vector<BatchEntry> entries = {
      {kFord, 0}, {kHonda, 2003}, {kBuick, 0}};
  HttpResult r = FetchBatch(entries);
  ASSERT_EQ(r.transport, Transport::kOk) << r.transport_message;
  ASSERT_EQ(r.http_status, 200);
  const auto log = fake_->BatchRequests();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(fake_->TotalRequests(), 1);
  EXPECT_EQ(log[0].batch,
            (std::vector<std::pair<std::string, int>>{
                {kFord, 0}, {kHonda, 2003}, {kBuick, 0}}));
  std::vector<Outcome> out = ClassifyBatch(r, absl::Now(), VinsOf(entries));
  ASSERT_EQ(out.size(), 3u);
  for (const Outcome& o : out) ASSERT_EQ(o.verdict, Outcome::Verdict::kDecoded);
  EXPECT_EQ(out[0].decoded.vehicle.make, "FORD");
  EXPECT_EQ(out[0].decoded.vehicle.model, "F-150") << "the captured fixture";
  EXPECT_EQ(out[1].decoded.vehicle.model_year, 2003);
  // The same as the single endpoint gives each VIN.
  for (size_t i = 0; i < entries.size(); ++i) {
    Outcome single =
        Classify(Fetch(*client_, entries[i].vin, entries[i].model_year),
                 absl::Now());
    EXPECT_EQ(out[i].decoded.vehicle.attributes,
              single.decoded.vehicle.attributes)
        << entries[i].vin;
    EXPECT_EQ(out[i].decoded.notes, single.decoded.notes) << entries[i].vin;
  }
}

TEST_F(BatchClientTest, PerVinScriptsShapeTheirOwnResults) {
  Script(kHonda, "missing");
  Script(kBuick, "sparse");
  const std::vector<BatchEntry> entries = {{kFord, 0}, {kHonda, 0}, {kBuick, 0}};
  std::vector<Outcome> out =
      ClassifyBatch(FetchBatch(entries), absl::Now(), VinsOf(entries));
  EXPECT_EQ(out[0].verdict, Outcome::Verdict::kDecoded);
  EXPECT_EQ(out[1].verdict, Outcome::Verdict::kRetry);
  EXPECT_EQ(out[1].error.kind, "bad_response");
  ASSERT_EQ(out[2].verdict, Outcome::Verdict::kDecoded);
  EXPECT_EQ(out[2].decoded.vehicle.make, "") << "sparse is a finished decode";
}

TEST_F(BatchClientTest, AFaultOfOneVinFailsTheWholeAnswer) {
  Script(kHonda, "429:3,ok");
  const std::vector<BatchEntry> entries = {{kFord, 0}, {kHonda, 0}};
  HttpResult r = FetchBatch(entries);
  EXPECT_EQ(r.http_status, 429);
  EXPECT_EQ(r.retry_after, "3");
  r = FetchBatch(entries);
  EXPECT_EQ(r.http_status, 200) << "the script moved on";
}

TEST_F(BatchClientTest, BatchWideScriptsAnswerTheNextBatches) {
  // The reset first, on a fresh connection: libcurl re-sends a request once
  // when a reused keep-alive connection dies before answering.
  auto steps = Step::ParseList("reset,503,ok");
  ASSERT_TRUE(steps.ok());
  fake_->ScriptBatch(*steps);
  const std::vector<BatchEntry> entries = {{kFord, 0}, {kHonda, 0}};
  EXPECT_EQ(FetchBatch(entries).transport, Transport::kReset);
  EXPECT_EQ(FetchBatch(entries).http_status, 503);
  EXPECT_EQ(FetchBatch(entries).http_status, 200);
  EXPECT_EQ(Fetch(*client_, kFord).http_status, 200)
      << "single requests are not scripted by it";
  const auto log = fake_->Requests();
  ASSERT_EQ(log.size(), 4u);
  EXPECT_EQ(log[0].served, "reset");
  EXPECT_EQ(log[1].served, "503");
  EXPECT_EQ(fake_->RequestCount(kHonda), 3) << "batches holding it count";
}

}  // namespace
}  // namespace vpic

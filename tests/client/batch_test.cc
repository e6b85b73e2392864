// `vinctl batch` end to end: RunBatch against the in-process server in front
// of the fake vPIC. Errors of a whole run: batch_errors_test.cc.
#include "client/batch.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "feed/result_writer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/vin_gen.h"
#include "tests/client/batch_test_util.h"
#include "upstream/peak_hours.h"

namespace vinctl {
namespace {

using testing::ElementsAre;
using testing::HasSubstr;
using testing::Pair;
using testing::StartsWith;
using testing::UnorderedElementsAre;
using namespace testing_batch;  // NOLINT: constants and helpers of the tests

TEST_F(BatchTest, CsvWithExtraColumnsInOrderWithFailuresReported) {
  StartServer();
  const std::string rejected = testing_util::ValidVin(404);
  Script(rejected, "404");
  const std::vector<std::string> input_lines = {
      "stock,VIN,price",
      absl::StrCat("S-1001,", kFord, ",\"31,500\""),
      absl::StrCat("S-1002,", kHonda, ",\"12,000\""),
      absl::StrCat("S-1003,", kBadCheckDigit, ",999"),
      absl::StrCat("\"S-1004 \"\"demo\"\"\",", kBuick, ",\"7,250\""),
      absl::StrCat("S-1005,", kFord, ",\"31,400\""),  // a duplicate
      absl::StrCat("S-1006,", kCheckX, ",\"88,000\""),
      absl::StrCat("S-1007,", rejected, ",\"1,000\""),
      "S-1008,,0",  // no VIN
  };
  auto summary = Run(absl::StrCat(absl::StrJoin(input_lines, "\n"), "\n"));
  ASSERT_TRUE(summary.ok()) << summary.status();

  const CsvOutput out = ParseOutput(out_.str());
  std::vector<std::string> expected_header = {"stock", "VIN", "price"};
  expected_header.insert(expected_header.end(), feed::kResultColumns.begin(),
                         feed::kResultColumns.end());
  EXPECT_EQ(out.header, expected_header);
  ASSERT_EQ(out.rows.size(), 8u) << out_.str();
  for (size_t i = 0; i < out.rows.size(); ++i) {
    EXPECT_THAT(out.lines[i], StartsWith(input_lines[i + 1] + ","))
        << "row " << i << ": input order, input columns byte for byte";
  }

  const auto& rows = out.rows;
  std::vector<std::string> statuses;
  for (const auto& row : rows) statuses.push_back(row["status"]);
  EXPECT_THAT(statuses, ElementsAre("done", "done", "failed", "done", "done",
                                    "done", "failed", "failed"));

  EXPECT_EQ(rows[0]["make"], "FORD");
  EXPECT_EQ(rows[0]["model"], "F-150");
  EXPECT_EQ(rows[0]["model_year"], "2021");
  EXPECT_EQ(rows[0]["engine_cylinders"], "6");
  EXPECT_EQ(rows[0]["displacement_l"], "3.5");
  EXPECT_EQ(rows[0]["source"], "VPIC");
  EXPECT_EQ(rows[0]["attempts"], "1");
  EXPECT_EQ(rows[0]["notes"], "0");
  EXPECT_EQ(rows[0]["failure_reason"], "");
  EXPECT_EQ(rows[1]["make"], "HONDA");

  EXPECT_EQ(rows[2]["failure_reason"], "INVALID_VIN");
  EXPECT_THAT(rows[2]["error"], HasSubstr("check digit"));
  EXPECT_EQ(rows[2]["make"], "");

  EXPECT_EQ(rows[3]["stock"], "S-1004 \"demo\"");
  EXPECT_EQ(rows[4]["make"], "FORD") << "the duplicate is answered too";
  EXPECT_EQ(fake_->RequestCount(kFord), 1) << "and costs no second request";

  EXPECT_EQ(rows[6]["failure_reason"], "UPSTREAM_REJECTED");
  EXPECT_THAT(rows[6]["error"], HasSubstr("404"));
  EXPECT_EQ(rows[6]["attempts"], "1");
  EXPECT_EQ(rows[7]["failure_reason"], "INVALID_VIN");
  EXPECT_THAT(rows[7]["error"], HasSubstr("empty"));

  EXPECT_EQ(summary->records, 8);
  EXPECT_EQ(summary->done, 5);
  EXPECT_EQ(summary->failed, 3);
  EXPECT_THAT(summary->failed_by_reason,
              UnorderedElementsAre(Pair("INVALID_VIN", 2),
                                   Pair("UPSTREAM_REJECTED", 1)));
  EXPECT_EQ(BatchExitCode(summary), kExitItemsFailed);
  EXPECT_THAT(progress_.str(),
              StartsWith("vinctl: 8 records, 5 done, 3 failed (INVALID_VIN 2, "
                         "UPSTREAM_REJECTED 1), in "));
  EXPECT_EQ(progress_.str().find('\r'), std::string::npos)
      << "no progress line when not asked";
}

TEST_F(BatchTest, AllGoodFeedExitsZero) {
  StartServer();
  auto summary = Run(absl::StrCat("VIN,note\r\n", kFord, ",a\r\n", kHonda,
                                  ",b\r\n", kCheckX, ",c\r\n"));
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->done, 3);
  EXPECT_EQ(summary->failed, 0);
  EXPECT_EQ(BatchExitCode(summary), kExitOk);
  const CsvOutput out = ParseOutput(out_.str());
  ASSERT_EQ(out.rows.size(), 3u);
  EXPECT_EQ(out.rows[2]["VIN"], kCheckX);
  EXPECT_EQ(out.rows[2]["note"], "c");
  EXPECT_EQ(out.rows[2]["status"], "done");
}

TEST_F(BatchTest, NdjsonFormat) {
  StartServer();
  BatchOptions options;
  options.format = feed::OutputFormat::kNdjson;
  auto summary =
      Run(absl::StrCat("stock,vin\nS1,", kFord, "\nS2,", kBadCheckDigit, "\n"),
          options);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(BatchExitCode(summary), kExitItemsFailed);
  std::vector<std::string> lines =
      absl::StrSplit(out_.str(), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 2u) << out_.str();
  const auto done = nlohmann::ordered_json::parse(lines[0]);
  EXPECT_EQ(done["input"].dump(),
            absl::StrCat(R"({"stock":"S1","vin":")", kFord, R"("})"));
  EXPECT_EQ(done["request_id"], "0");
  EXPECT_EQ(done["status"], "done");
  EXPECT_EQ(done["result"]["vehicle"]["make"], "FORD");
  const auto failed = nlohmann::json::parse(lines[1]);
  EXPECT_EQ(failed["request_id"], "1");
  EXPECT_EQ(failed["status"], "failed");
  EXPECT_EQ(failed["failure_reason"], "INVALID_VIN");
  EXPECT_EQ(failed["failure"]["reason"], "FAILURE_REASON_INVALID_VIN");
}

TEST_F(BatchTest, PlainListOneVinPerLine) {
  StartServer();
  auto summary = Run(absl::StrCat(kHonda, "\n\n  ", kFord, "  \n", kBuick));
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->records, 3) << "blank lines are not records";
  EXPECT_EQ(BatchExitCode(summary), kExitOk);
  const CsvOutput out = ParseOutput(out_.str());
  EXPECT_EQ(out.header[0], "vin");
  EXPECT_EQ(out.header.size(), 1 + feed::kResultColumns.size());
  ASSERT_EQ(out.rows.size(), 3u);
  EXPECT_EQ(out.rows[0]["vin"], kHonda);
  EXPECT_EQ(out.rows[1]["vin"], kFord);
  EXPECT_EQ(out.rows[1]["make"], "FORD");
  EXPECT_EQ(out.rows[2]["vin"], kBuick);
}

TEST_F(BatchTest, WindowSmallerThanTheFeedStillCompletesInOrder) {
  StartServer();
  std::vector<std::string> vins;
  std::string input = "vin,n\n";
  for (int i = 0; i < 20; ++i) {
    vins.push_back(testing_util::ValidVin(1000 + i));
    absl::StrAppend(&input, vins.back(), ",", i, "\n");
  }
  // Early items finish late, so later ones wait for them to be written.
  Script(vins[0], "delay:300ms");
  Script(vins[1], "503,ok");
  Script(vins[5], "503,503,ok");
  BatchOptions options;
  options.window = 2;
  auto summary = Run(input, options);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->records, 20);
  EXPECT_EQ(summary->done, 20);
  const CsvOutput out = ParseOutput(out_.str());
  ASSERT_EQ(out.rows.size(), 20u);
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(out.rows[i]["vin"], vins[i]);
    EXPECT_EQ(out.rows[i]["n"], absl::StrCat(i));
    EXPECT_EQ(out.rows[i]["status"], "done");
  }
  EXPECT_EQ(out.rows[5]["attempts"], "3");
  // The server counts an item until its terminal event's write completes,
  // which it may learn after the client has received the event and sent the
  // next item: one write in flight per stream, hence window + 1.
  EXPECT_LE(server_->batch_counters().peak_stream_outstanding.load(), 3)
      << "the window bounds what is in flight at the server";
}

TEST_F(BatchTest, ProgressLineShowsRetries) {
  StartServer();
  Script(kHonda, "503,503,delay:300ms");
  BatchOptions options;
  options.show_progress = true;
  options.progress_interval = absl::Milliseconds(10);
  auto summary = Run(absl::StrCat(kFord, "\n", kHonda, "\n"), options);
  ASSERT_TRUE(summary.ok()) << summary.status();
  const std::string progress = progress_.str();
  EXPECT_THAT(progress, HasSubstr("\r1 done, 0 failed, 1 retrying now, "));
  EXPECT_THAT(progress, HasSubstr("\r\x1b[Kvinctl: 2 records, 2 done, 0 "
                                  "failed, in "));
}

// The progress line of a feed waiting for the rate cap (rule 17 too: at
// NHTSA's peak hours a bulk feed, vinctl's default priority, is held to its
// share of the rate, and the progress line says so; the same feed sent as
// interactive waits for the rate alone).
class RateCapBatchTest : public BatchTest {
 protected:
  // The progress lines of a two-row feed of `priority` behind the token of
  // this second (one request a second, burst 1), on a server set as `o`
  // otherwise.
  std::string ProgressBehindTheToken(server::ServerOptions o,
                                     vin::v1::Priority priority) {
    o.engine.budget.rate_per_minute = 60;
    o.engine.budget.burst = 1;
    o.engine.upstream_batch_max = 1;
    StartServer(o);
    vin::v1::DecodeResponse first;
    EXPECT_TRUE(Decode(kCheckX, &first).ok()) << "takes the token of this second";
    BatchOptions options;
    options.show_progress = true;
    options.progress_interval = absl::Milliseconds(10);
    options.priority = priority;
    auto summary = Run(absl::StrCat(kHonda, "\n", kBuick, "\n"), options);
    EXPECT_TRUE(summary.ok()) << summary.status();
    if (summary.ok()) EXPECT_EQ(summary->done, 2);
    return progress_.str();
  }
  // Peak hours all week, bulk at half the rate.
  static server::ServerOptions AtPeak() {
    server::ServerOptions o = Defaults();
    auto peak = upstream::PeakHours::Parse("Mon-Sun 00:00-24:00 UTC");
    EXPECT_TRUE(peak.ok()) << peak.status();
    if (peak.ok()) o.engine.peak_hours = *peak;
    o.engine.bulk_peak_share = 0.5;
    return o;
  }
};

TEST_F(RateCapBatchTest, ProgressLineShowsRowsWaitingForTheRateCap) {
  const std::string progress =
      ProgressBehindTheToken(Defaults(), vin::v1::PRIORITY_UNSPECIFIED);
  // Both rows are told they wait for the next token, ~1 s away.
  EXPECT_THAT(progress, HasSubstr(" 2 waiting for the rate cap (up to "));
  EXPECT_THAT(progress, testing::Not(HasSubstr("peak hours")))
      << "no peak hours on this server";
}

TEST_F(RateCapBatchTest, ABulkFeedIsToldItWaitsForPeakHours) {
  const std::string progress =
      ProgressBehindTheToken(AtPeak(), vin::v1::PRIORITY_UNSPECIFIED);
  EXPECT_THAT(progress, HasSubstr(" waiting for the rate cap (up to "));
  EXPECT_THAT(progress, HasSubstr(", bulk at NHTSA's peak hours), "));
}

TEST_F(RateCapBatchTest, AnInteractiveFeedWaitsForTheRateAlone) {
  const std::string progress =
      ProgressBehindTheToken(AtPeak(), vin::v1::PRIORITY_INTERACTIVE);
  EXPECT_THAT(progress, HasSubstr(" waiting for the rate cap (up to "));
  EXPECT_THAT(progress, testing::Not(HasSubstr("peak hours")));
}

// With the circuit breaker open (rule 13), the rows fail at once, each
// saying why, and the summary line ends with since when vPIC is
// unreachable (so does the progress line while the feed runs).
TEST_F(BatchTest, ProgressLineSaysWhenVpicIsUnreachable) {
  server::ServerOptions o = Defaults();
  o.engine.breaker.failures = 2;
  o.engine.max_attempts = 1;
  o.engine.upstream_batch_max = 1;
  StartServer(o);
  fake_->ScriptEveryVin(std::vector<fakevpic::Step>(
      10, *fakevpic::Step::Parse("503")));
  BatchOptions options;
  options.show_progress = true;
  options.progress_interval = absl::Milliseconds(10);
  options.window = 1;  // one row at a time: the first two open the breaker
  std::string feed;
  for (int i = 0; i < 20; ++i) absl::StrAppend(&feed, testing_util::ValidVin(300 + i), "\n");
  auto summary = Run(feed, options);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->failed, 20);
  EXPECT_EQ(fake_->TotalRequests(), 2) << "the breaker sent nothing more";
  EXPECT_EQ(summary->failed_by_reason.at("UPSTREAM_UNAVAILABLE"), 20);
  EXPECT_THAT(summary->vpic_unreachable_since, testing::StartsWith("20"));
  EXPECT_THAT(progress_.str(),
              HasSubstr(absl::StrCat("failed (UPSTREAM_UNAVAILABLE 20), in ")));
  EXPECT_THAT(progress_.str(), testing::EndsWith(absl::StrCat(
                                   "; vPIC unreachable since ",
                                   summary->vpic_unreachable_since, "\n")));
  const CsvOutput out = ParseOutput(out_.str());
  ASSERT_EQ(out.rows.size(), 20u);
  EXPECT_THAT(out.rows.back()["error"], HasSubstr("vPIC is unreachable since"));
}

}  // namespace
}  // namespace vinctl

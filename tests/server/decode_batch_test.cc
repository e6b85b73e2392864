// DecodeBatch through real gRPC on loopback, against the fake vPIC.
#include <map>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/batch_checks.h"
#include "testing/batch_session.h"
#include "testing/eventually.h"
#include "testing/server_fixture.h"
#include "testing/vin_gen.h"

namespace {

using testing::HasSubstr;
using testing_util::BatchOutcome;
using testing_util::CheckContract;
using testing_util::Item;
using testing_util::RunBatch;
using testing_util::ValidVin;
using vin::v1::DecodeBatchRequest;
using vin::v1::DecodeBatchResponse;

constexpr char kHonda[] = "1HGCM82633A004352";

class DecodeBatchTest : public testing_util::ServerFixture {};

TEST_F(DecodeBatchTest, TenThousandItemsWithDuplicatesAndInvalidVins) {
  server::ServerOptions o = Defaults();
  o.engine.upstream_batch_max = 50;  // as in production
  StartServer(o);
  std::vector<DecodeBatchRequest> requests;
  absl::flat_hash_set<std::string> distinct_valid;
  int invalid = 0;
  for (int i = 0; i < 10000; ++i) {
    std::string vin;
    if (i % 10 == 7) {
      vin = "1HGCM82643A004352";  // wrong check digit
      ++invalid;
    } else if (i % 10 == 9) {
      vin = ValidVin(i % 50);  // repeats within the stream
      distinct_valid.insert(vin);
    } else {
      vin = ValidVin(1000 + i);
      distinct_valid.insert(vin);
    }
    requests.push_back(Item(vin, absl::StrCat("row-", i)));
  }
  BatchOutcome out = RunBatch(stub_.get(), requests);
  ASSERT_TRUE(out.status.ok()) << out.status.error_message();
  auto by_id = CheckContract(out, requests.size());
  int done = 0, failed_invalid = 0;
  for (const auto& [id, events] : by_id) {
    const auto& last = events.back();
    if (last.has_done()) {
      ++done;
      EXPECT_EQ(last.done().result().vehicle().make(), "HONDA");
    } else {
      EXPECT_EQ(last.failed().reason(), vin::v1::FAILURE_REASON_INVALID_VIN);
      EXPECT_THAT(last.failed().message(), HasSubstr("check digit"));
      EXPECT_EQ(events.size(), 1u) << "rejected locally: FAILED at once";
      ++failed_invalid;
    }
  }
  EXPECT_EQ(failed_invalid, invalid);
  EXPECT_EQ(done, 10000 - invalid);
  EXPECT_EQ(fake_->TotalVinsRequested(),
            static_cast<int>(distinct_valid.size()))
      << "each distinct valid VIN asked for once (alone or in a batch)";
  absl::flat_hash_map<std::string, int> asked;
  for (const auto& r : fake_->Requests()) {
    if (!r.is_batch()) ++asked[r.vin];
    for (const auto& [vin, year] : r.batch) ++asked[vin];
  }
  for (const std::string& vin : distinct_valid) {
    ASSERT_EQ(asked[vin], 1) << vin;
  }
}

TEST_F(DecodeBatchTest, ItemsBeyondTheServersCapacityFailOverloadedAlone) {
  server::ServerOptions o = Defaults();
  o.engine.max_waiters = 2;  // --max_pending
  StartServer(o);
  fake_->HoldAnswers();  // the first two stay in progress
  std::vector<DecodeBatchRequest> feed;
  for (int i = 0; i < 5; ++i) feed.push_back(Item(ValidVin(400 + i), absl::StrCat("r", i)));
  int overloaded = 0;
  BatchOutcome out = RunBatch(stub_.get(), feed, [&](const DecodeBatchResponse& e) {
    if (e.has_failed() &&
        e.failed().reason() == vin::v1::FAILURE_REASON_OVERLOADED &&
        ++overloaded == 3) {
      fake_->ReleaseAnswers();  // now the two in progress may finish
    }
  });
  ASSERT_TRUE(out.status.ok()) << out.status.error_message();
  std::map<std::string, std::vector<DecodeBatchResponse>> by_id;
  for (const auto& e : out.events) by_id[e.request_id()].push_back(e);
  ASSERT_EQ(by_id.size(), 5u);
  int done = 0, failed = 0;
  for (const auto& [id, events] : by_id) {
    int terminals = 0;
    for (const auto& e : events) terminals += e.has_done() || e.has_failed();
    EXPECT_EQ(terminals, 1) << id;
    const auto& last = events.back();
    if (last.has_done()) ++done;
    if (last.has_failed()) {
      ++failed;
      EXPECT_EQ(last.failed().reason(), vin::v1::FAILURE_REASON_OVERLOADED);
      EXPECT_TRUE(last.failed().retryable());
      EXPECT_THAT(last.failed().message(), HasSubstr("2 decodes in progress"));
    }
  }
  EXPECT_EQ(done, 2);
  EXPECT_EQ(failed, 3);
  EXPECT_EQ(fake_->TotalRequests(), 2) << "refused items never reach vPIC";
}

TEST_F(DecodeBatchTest, DefaultRequestIdIsThePosition) {
  StartServer();
  BatchOutcome out =
      RunBatch(stub_.get(), {Item("  1ftmw1t88mfa00001 "), Item("bad vin"),
                             Item("", "mine")});
  ASSERT_TRUE(out.status.ok());
  auto by_id = CheckContract(out, 3);
  ASSERT_EQ(by_id.count("#0"), 1u);
  EXPECT_EQ(by_id["#0"].back().vin(), "1FTMW1T88MFA00001") << "normalised";
  EXPECT_EQ(by_id["#0"].back().done().result().vehicle().model(), "F-150");
  ASSERT_EQ(by_id.count("#1"), 1u);
  EXPECT_EQ(by_id["#1"].back().failed().reason(),
            vin::v1::FAILURE_REASON_INVALID_VIN);
  ASSERT_EQ(by_id.count("mine"), 1u);
  EXPECT_THAT(by_id["mine"].back().failed().message(), HasSubstr("empty"));
}

TEST_F(DecodeBatchTest, MalformedItemsFailAloneAndNothingIsLost) {
  StartServer();
  const std::string non_ascii = "1HGCM82633A00435\xC3\x89";
  BatchOutcome out = RunBatch(
      stub_.get(),
      {Item(non_ascii, "utf8"), Item("", "empty"), Item(kHonda, "good"),
       Item(std::string(5000, 'A'), "long")});
  ASSERT_TRUE(out.status.ok()) << out.status.error_message();
  auto by_id = CheckContract(out, 4);
  EXPECT_EQ(by_id["utf8"].back().vin(), non_ascii) << "echoed as sent";
  EXPECT_THAT(by_id["utf8"].back().failed().message(), HasSubstr("non-ASCII"));
  EXPECT_THAT(by_id["long"].back().failed().message(),
              HasSubstr("17 characters"));
  EXPECT_TRUE(by_id["good"].back().has_done());
}

TEST_F(DecodeBatchTest, OversizedMessageEndsTheStreamWithAClearStatus) {
  StartServer();
  DecodeBatchRequest huge = Item(kHonda, std::string(100 * 1024, 'x'));
  BatchOutcome out = RunBatch(stub_.get(), {huge});
  EXPECT_EQ(out.status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(out.status.error_message(), HasSubstr("larger than max"));
  // The server is fine afterwards.
  vin::v1::DecodeResponse resp;
  EXPECT_TRUE(Decode(kHonda, &resp).ok());
}

TEST_F(DecodeBatchTest, AnOversizedMessageAfterGoodItemsLeavesNothingBehind) {
  StartServer();
  fake_->HoldAnswers();  // the good items stay in progress
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(60)));
  auto stream = stub_->DecodeBatch(&ctx);
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(stream->Write(Item(ValidVin(700 + i), absl::StrCat("g", i))));
  }
  DecodeBatchResponse e;
  int queued = 0;
  while (queued < 5 && stream->Read(&e)) queued += e.has_queued();
  ASSERT_EQ(queued, 5);
  stream->Write(Item(kHonda, std::string(100 * 1024, 'x')));  // may fail: ends
  stream->WritesDone();
  while (stream->Read(&e)) {
  }
  const grpc::Status status = stream->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(), HasSubstr("larger than max"));
  // The stream's items left their flights: nothing waits, nothing is sent.
  ASSERT_TRUE(server_->engine().WaitForStats(
      [](const engine::EngineStats& s) {
        return s.flights == 0 && s.waiters == 0 && s.upstream_active == 0;
      },
      absl::Seconds(20)));
  EXPECT_EQ(server_->batch_counters().items_outstanding.load(), 0);
  // The stream's OnDone (which closes it in the counters) may come just after
  // the client has its status: polled, with a bound.
  testing_util::Eventually(
      [&] { return server_->batch_counters().streams.load() == 0; },
      absl::Seconds(10));
  EXPECT_EQ(server_->batch_counters().streams.load(), 0);
  fake_->ReleaseAnswers();
  vin::v1::DecodeResponse resp;
  EXPECT_TRUE(Decode(kHonda, &resp).ok()) << "and the server goes on serving";
}

TEST_F(DecodeBatchTest, UnaryCallAndBatchItemShareOneFlight) {
  StartServer();
  Script(kHonda, "delay:1s");
  grpc::Status unary_status;
  vin::v1::DecodeResponse unary;
  std::thread unary_caller;
  BatchOutcome out = RunBatch(
      stub_.get(), {Item(kHonda, "batch")},
      [&](const DecodeBatchResponse& e) {
        if (e.has_queued()) {
          // The batch item's flight is running: now the unary call joins.
          unary_caller = std::thread(
              [&] { unary_status = Decode(kHonda, &unary); });
          ASSERT_TRUE(server_->engine().WaitForStats(
              [](const engine::EngineStats& s) { return s.waiters == 2; },
              absl::Seconds(10)));
        }
      });
  unary_caller.join();
  ASSERT_TRUE(out.status.ok());
  ASSERT_TRUE(unary_status.ok()) << unary_status.error_message();
  ASSERT_TRUE(out.events.back().has_done());
  EXPECT_EQ(out.events.back().done().result().vehicle().make(),
            unary.result().vehicle().make());
  EXPECT_EQ(out.events.back().done().result().decode_time().seconds(),
            unary.result().decode_time().seconds());
  EXPECT_EQ(fake_->RequestCount(kHonda), 1);
}

TEST_F(DecodeBatchTest, DuplicatesInOneStreamAreCoalesced) {
  StartServer();
  Script(kHonda, "delay:500ms");
  BatchOutcome out = RunBatch(stub_.get(), {Item(kHonda, "a"),
                                            Item(kHonda, "b")});
  ASSERT_TRUE(out.status.ok());
  auto by_id = CheckContract(out, 2);
  EXPECT_FALSE(by_id["a"][0].queued().coalesced());
  EXPECT_TRUE(by_id["b"][0].queued().coalesced());
  EXPECT_TRUE(by_id["a"].back().has_done());
  EXPECT_TRUE(by_id["b"].back().has_done());
  EXPECT_EQ(fake_->RequestCount(kHonda), 1);
}

TEST_F(DecodeBatchTest, ShutdownFailsPendingItemsRetryable) {
  StartServer();
  Script(kHonda, "hang");
  std::thread stopper;
  BatchOutcome out = RunBatch(
      stub_.get(), {Item(kHonda, "pending")},
      [&](const DecodeBatchResponse& e) {
        if (e.has_queued()) {
          ASSERT_TRUE(fake_->WaitForRequests(1, absl::Seconds(10)));
          stopper = std::thread(
              [&] { server_->Shutdown(absl::Milliseconds(100)); });
        }
      });
  stopper.join();
  ASSERT_FALSE(out.events.empty());
  const auto& last = out.events.back();
  ASSERT_TRUE(last.has_failed());
  EXPECT_EQ(last.failed().reason(), vin::v1::FAILURE_REASON_SHUTTING_DOWN);
  EXPECT_TRUE(last.failed().retryable());
}

}  // namespace

// DecodeBatch's flow over time: retries through an outage, the stagger of a
// burst's first attempts, the window against slow, paused and cancelling
// readers. (The per-item contract: decode_batch_test.cc.)
#include <algorithm>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
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

using testing_util::BatchOutcome;
using testing_util::CheckContract;
using testing_util::Item;
using testing_util::RunBatch;
using testing_util::ValidVin;
using vin::v1::DecodeBatchRequest;
using vin::v1::DecodeBatchResponse;

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr int kBigStream = 20000;  // sanitizers run 5-15x slower
#else
constexpr int kBigStream = 100000;
#endif

constexpr char kHonda[] = "1HGCM82633A004352";

class DecodeBatchFlowTest : public testing_util::ServerFixture {};

TEST_F(DecodeBatchFlowTest, OutageRetriesSpreadOutThenSucceed) {
  server::ServerOptions o = OneRequestPerAttempt();
  o.engine.retry_base = absl::Milliseconds(50);
  o.engine.retry_cap = absl::Seconds(3);
  o.engine.max_attempts = 5;
  // This rule alone: the circuit breaker (rule 13, its own tests) would
  // open after five failures in a row and answer the rest at once.
  o.engine.breaker.failures = 0;
  StartServer(o);
  auto steps = fakevpic::Step::ParseList("503,503,503,ok");
  ASSERT_TRUE(steps.ok());
  fake_->ScriptEveryVin(*steps);
  constexpr int kItems = 100;
  std::vector<DecodeBatchRequest> requests;
  for (int i = 0; i < kItems; ++i) requests.push_back(Item(ValidVin(i)));
  BatchOutcome out = RunBatch(stub_.get(), requests);
  ASSERT_TRUE(out.status.ok());
  auto by_id = CheckContract(out, kItems);
  std::vector<double> mean_delay_ms(3, 0);
  std::set<int64_t> first_delays;
  for (const auto& [id, events] : by_id) {
    ASSERT_EQ(events.size(), 5u) << id;  // QUEUED, 3 x RETRYING, DONE
    ASSERT_TRUE(events.back().has_done()) << id;
    EXPECT_EQ(events.back().done().result().attempts(), 4);
    for (int k = 0; k < 3; ++k) {
      const auto& r = events[1 + k].retrying();
      EXPECT_EQ(r.attempt(), k + 1);
      EXPECT_EQ(r.error().http_status(), 503);
      const double ms = r.next_delay().seconds() * 1e3 + r.next_delay().nanos() / 1e6;
      EXPECT_GE(ms, 50.0);
      EXPECT_LE(ms, 3000.0);
      mean_delay_ms[k] += ms / kItems;
      if (k == 0) first_delays.insert(r.next_delay().nanos());
    }
  }
  // Decorrelated jitter: delays differ between items and grow on average.
  EXPECT_GT(first_delays.size(), kItems * 9 / 10u);
  EXPECT_LT(mean_delay_ms[0], mean_delay_ms[1]);
  EXPECT_LT(mean_delay_ms[1], mean_delay_ms[2]);
  // In the fake's log, the first retries do not arrive together.
  std::vector<absl::Time> first_retries;
  absl::flat_hash_map<std::string, int> seen;
  for (const auto& r : fake_->Requests()) {
    if (++seen[r.vin] == 2) first_retries.push_back(r.time);
  }
  ASSERT_EQ(first_retries.size(), static_cast<size_t>(kItems));
  std::sort(first_retries.begin(), first_retries.end());
  EXPECT_GE(first_retries.back() - first_retries.front(),
            absl::Milliseconds(50));
  size_t densest = 0;
  for (size_t i = 0, j = 0; i < first_retries.size(); ++i) {
    while (first_retries[i] - first_retries[j] > absl::Milliseconds(10)) ++j;
    densest = std::max(densest, i - j + 1);
  }
  EXPECT_LT(densest, static_cast<size_t>(kItems / 4))
      << "no stampede: at most a quarter of the retries within 10 ms";
}

TEST_F(DecodeBatchFlowTest, FirstAttemptsOfABurstAreStaggered) {
  server::ServerOptions o = OneRequestPerAttempt();
  o.engine.retry_base = absl::Milliseconds(300);
  o.engine.max_upstream_concurrency = 100;  // only the stagger spreads them
  StartServer(o);
  constexpr int kItems = 60;
  std::vector<DecodeBatchRequest> requests;
  for (int i = 0; i < kItems; ++i) requests.push_back(Item(ValidVin(i)));
  const absl::Time start = absl::Now();
  BatchOutcome out = RunBatch(stub_.get(), requests);
  ASSERT_TRUE(out.status.ok());
  CheckContract(out, kItems);
  std::vector<absl::Time> firsts;
  for (const auto& r : fake_->Requests()) firsts.push_back(r.time);
  ASSERT_EQ(firsts.size(), static_cast<size_t>(kItems));
  std::sort(firsts.begin(), firsts.end());
  // Spread over [0, base): not one burst, and none before the stream began.
  EXPECT_GE(firsts.front(), start);
  EXPECT_GE(firsts.back() - firsts.front(), absl::Milliseconds(100));
  size_t densest = 0;
  for (size_t i = 0, j = 0; i < firsts.size(); ++i) {
    while (firsts[i] - firsts[j] > absl::Milliseconds(10)) ++j;
    densest = std::max(densest, i - j + 1);
  }
  EXPECT_LT(densest, static_cast<size_t>(kItems / 3));
}

TEST_F(DecodeBatchFlowTest, SlowReaderNeverHasMoreThanTheWindowInProgress) {
  server::ServerOptions o = Defaults();
  o.batch_window = 64;
  o.engine.upstream_batch_max = 50;  // as in production
  StartServer(o);
  std::vector<DecodeBatchRequest> requests;
  for (int i = 0; i < kBigStream; ++i) {
    requests.push_back(Item(ValidVin(i % 2000)));
  }
  int64_t read = 0;
  BatchOutcome out = RunBatch(stub_.get(), requests,
                              [&](const DecodeBatchResponse&) {
                                // A slow consumer, not synchronisation.
                                if (++read % 2000 == 0) {
                                  std::this_thread::sleep_for(
                                      std::chrono::milliseconds(20));
                                }
                              });
  ASSERT_TRUE(out.status.ok()) << out.status.error_message();
  int terminals = 0;
  for (const auto& e : out.events) terminals += e.has_done() || e.has_failed();
  EXPECT_EQ(terminals, kBigStream);
  const auto& c = server_->batch_counters();
  EXPECT_EQ(c.items_read.load(), kBigStream);
  EXPECT_LE(c.peak_stream_outstanding.load(), 64);
  EXPECT_GE(c.peak_stream_outstanding.load(), 2);
  EXPECT_EQ(c.items_outstanding.load(), 0);
  EXPECT_EQ(fake_->TotalVinsRequested(), 2000) << "each VIN asked for once";
}

TEST_F(DecodeBatchFlowTest, AReaderThatPausesHoldsTheServerAtTheWindow) {
  server::ServerOptions o = Defaults();
  o.batch_window = 32;
  StartServer(o);
  // Enough events (~30 MB) to fill the transport's flow-control windows,
  // which let the first few MB through to the client's buffers.
  constexpr int kItems = 20000;
  std::vector<DecodeBatchRequest> requests;
  for (int i = 0; i < kItems; ++i) requests.push_back(Item(ValidVin(i % 100)));
  const auto& c = server_->batch_counters();
  bool held = false;
  int64_t read_when_held = -1;
  int events = 0;
  BatchOutcome out = RunBatch(
      stub_.get(), requests, [&](const DecodeBatchResponse&) {
        // The client stops reading once, until the server is held: its
        // window full of answers nobody takes, it reads no more items.
        if (++events != 500) return;
        held = testing_util::Eventually(
            [&] { return c.streams_held_by_reader.load() == 1; });
        read_when_held = c.items_read.load();
      });
  ASSERT_TRUE(out.status.ok()) << out.status.error_message();
  EXPECT_TRUE(held) << "a paused client holds the server at its window, "
                       "where it reads no more items";
  EXPECT_LT(read_when_held, kItems);
  EXPECT_LE(c.peak_stream_outstanding.load(), 32);
  EXPECT_EQ(c.streams_held_by_reader.load(), 0) << "released once it reads";
  int terminals = 0;
  for (const auto& e : out.events) terminals += e.has_done() || e.has_failed();
  EXPECT_EQ(terminals, kItems) << "every item answered once it reads again";
}

TEST_F(DecodeBatchFlowTest, CancelMidStreamStopsItsFlights) {
  StartServer();
  std::vector<DecodeBatchRequest> requests;
  for (int i = 0; i < 20; ++i) {
    const std::string vin = ValidVin(i);
    Script(vin, "hang,ok");
    requests.push_back(Item(vin));
  }
  grpc::ClientContext* ctx = nullptr;
  int queued = 0;
  BatchOutcome out = RunBatch(
      stub_.get(), requests,
      [&](const DecodeBatchResponse& e) {
        if (e.has_queued() && ++queued == 20) {
          // Every item is waiting on a hanging upstream request.
          ASSERT_TRUE(fake_->WaitForRequests(8, absl::Seconds(10)));
          ctx->TryCancel();
        }
      },
      [&](grpc::ClientContext* c) { ctx = c; });
  EXPECT_EQ(out.status.error_code(), grpc::StatusCode::CANCELLED);
  ASSERT_TRUE(server_->engine().WaitForStats(
      [](const engine::EngineStats& s) {
        return s.flights == 0 && s.waiters == 0 && s.pending_wakeups == 0 &&
               s.upstream_active == 0;
      },
      absl::Seconds(10)));
  const int requests_made = fake_->TotalRequests();
  EXPECT_LE(requests_made, 20);
  EXPECT_EQ(server_->batch_counters().items_outstanding.load(), 0);
  // The server keeps serving; with no flight left nothing else went upstream.
  vin::v1::DecodeResponse resp;
  ASSERT_TRUE(Decode(kHonda, &resp).ok());
  EXPECT_EQ(fake_->TotalRequests(), requests_made + 1);
}

}  // namespace

// Checks of what a DecodeBatch client sees, and of a server left with
// nothing in progress, for tests.
#ifndef VIN_TESTS_TESTING_BATCH_CHECKS_H_
#define VIN_TESTS_TESTING_BATCH_CHECKS_H_

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/server.h"
#include "testing/batch_session.h"
#include "testing/eventually.h"
#include "testing/scrape.h"
#include "vin/v1/vin.pb.h"

namespace testing_util {

using BatchEvents = std::vector<vin::v1::DecodeBatchResponse>;

inline bool IsTerminal(const vin::v1::DecodeBatchResponse& e) {
  return e.has_done() || e.has_failed();
}

// The events of a stream by request id, in the order they came.
inline std::map<std::string, BatchEvents> ByRequestId(const BatchEvents& all) {
  std::map<std::string, BatchEvents> out;
  for (const auto& e : all) out[e.request_id()].push_back(e);
  return out;
}

// What breaks the per-item event order in `all` (empty when nothing does):
// QUEUED first (an item failed at once has FAILED alone), then RETRYING,
// then at most one DONE or FAILED, and nothing after it. A stream cut short
// (cancelled) may leave an item without its terminal event; with
// `complete`, every item must have exactly one.
inline std::vector<std::string> OrderViolations(const BatchEvents& all,
                                                bool complete) {
  std::vector<std::string> out;
  for (const auto& [id, events] : ByRequestId(all)) {
    bool terminal_seen = false;
    for (size_t i = 0; i < events.size(); ++i) {
      const auto& e = events[i];
      if (terminal_seen) {
        out.push_back(absl::StrCat(id, ": an event after its terminal one: ",
                                   e.ShortDebugString()));
      }
      if (e.has_queued() && i != 0) {
        out.push_back(absl::StrCat(id, ": QUEUED is event ", i));
      }
      if (e.has_retrying() && !events[0].has_queued()) {
        out.push_back(absl::StrCat(id, ": RETRYING without QUEUED first"));
      }
      if (e.has_done() && !events[0].has_queued()) {
        out.push_back(absl::StrCat(id, ": DONE without QUEUED first"));
      }
      if (e.has_failed() && i > 0 && !events[0].has_queued()) {
        out.push_back(absl::StrCat(id, ": FAILED after events but no QUEUED"));
      }
      if (e.event_case() == vin::v1::DecodeBatchResponse::EVENT_NOT_SET) {
        out.push_back(absl::StrCat(id, ": an event with no event set"));
      }
      terminal_seen = terminal_seen || IsTerminal(e);
    }
    if (complete && !terminal_seen) {
      out.push_back(absl::StrCat(id, ": no terminal event"));
    }
  }
  return out;
}

// Checks the per-item event contract of a finished stream (OrderViolations,
// every item with its one terminal event, `items` items answered) and
// returns the events by request id.
inline std::map<std::string, BatchEvents> CheckContract(const BatchOutcome& out,
                                                        size_t items) {
  std::map<std::string, BatchEvents> by_id = ByRequestId(out.events);
  EXPECT_EQ(by_id.size(), items) << "every item is answered";
  EXPECT_THAT(OrderViolations(out.events, true), testing::IsEmpty());
  return by_id;
}

// The gauges that say what is in progress; each must come back to 0 once
// every stream has ended.
inline constexpr const char* kInProgressGauges[] = {
    "vin_flights_in_progress", "vin_scheduler_pending",
    "vin_waiting_for_rate", "vin_batch_items_in_window",
    "vin_batch_streams_open", "vin_batch_streams_held_by_reader"};

// What is still in progress ("" when nothing is): the engine's stats and
// the in-progress gauges of a scrape.
inline std::string InProgress(server::VinServer& server) {
  const engine::EngineStats s = server.engine().Stats();
  std::string left;
  if (s.flights != 0) absl::StrAppend(&left, "flights=", s.flights, " ");
  if (s.waiters != 0) absl::StrAppend(&left, "waiters=", s.waiters, " ");
  if (s.pending_wakeups != 0) {
    absl::StrAppend(&left, "wake-ups=", s.pending_wakeups, " ");
  }
  if (s.upstream_active != 0) {
    absl::StrAppend(&left, "upstream_active=", s.upstream_active, " ");
  }
  std::string body;
  if (HttpGet(server.metrics_port(), "/metrics", &body) != 200) {
    left += "no metrics scrape ";
  } else {
    const Samples samples = ParseSamples(body);
    for (const char* gauge : kInProgressGauges) {
      if (samples.count(gauge) == 0) {
        absl::StrAppend(&left, gauge, " missing ");
      } else if (samples.at(gauge) != 0) {
        absl::StrAppend(&left, gauge, "=", samples.at(gauge), " ");
      }
    }
  }
  return left;
}

// Polls the server (engine stats and a scrape of its metrics, which needs
// --metrics_listen) until nothing is in progress: no flight, waiter,
// wake-up, upstream request, window slot or open stream. Returns "" when
// that holds within `bound`, else what is still left.
inline std::string WaitUntilNothingInProgress(server::VinServer& server,
                                              absl::Duration bound) {
  std::string left;
  Eventually(
      [&] {
        left = InProgress(server);
        return left.empty();
      },
      bound, absl::Milliseconds(2));
  return left;
}

}  // namespace testing_util

#endif  // VIN_TESTS_TESTING_BATCH_CHECKS_H_

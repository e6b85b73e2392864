// The fixture of the engine's rule tests (engine_rules_test.cc,
// engine_rules_sharing_test.cc, engine_rules_leaving_test.cc): the engine on
// a fake clock in front of a scripted upstream (manual_engine_fixture.h),
// with each flight its own request at once, and steps of time and answers
// as the rules need them.
#ifndef VIN_TESTS_ENGINE_ENGINE_RULES_FIXTURE_H_
#define VIN_TESTS_ENGINE_ENGINE_RULES_FIXTURE_H_

#include <string>
#include <utility>

#include "engine/engine.h"
#include "gtest/gtest.h"
#include "manual_engine_fixture.h"
#include "testing/recording_listener.h"
#include "testing/scripted_upstream.h"

namespace engine {

class EngineRulesTest : public ManualEngineTest {
 protected:
  static constexpr absl::Duration kBase = absl::Milliseconds(100);
  static constexpr absl::Duration kCap = absl::Seconds(1);
  static constexpr absl::Duration kNs = absl::Nanoseconds(1);

  static vpic::HttpResult Status(int status, std::string retry_after = "") {
    return testing_util::ScriptedUpstream::Status(status,
                                                  std::move(retry_after));
  }

  // Each flight its own request at once (no rate cap, no batching, no
  // concurrency limit to speak of), every retry allowed (no retry budget),
  // and the engine's own random jitter.
  static EngineOptions Options() {
    EngineOptions o;
    o.retry_base = kBase;
    o.retry_cap = kCap;
    o.budget.rate_per_minute = 0;
    o.budget.retry_ratio = -1;
    o.upstream_batch_max = 1;
    o.max_upstream_concurrency = 1000;
    // This rule alone: the circuit breaker (rule 13, its own tests) would
    // open after five failures in a row and answer the rest at once.
    o.breaker.failures = 0;
    return o;
  }

  absl::Time Now() const { return clock_.Now(); }
  size_t Sent() const { return upstream_->sent().size(); }
  // Moves the clock by `d`, then turns the loop there.
  void Step(absl::Duration d) {
    clock_.Advance(d);
    Turn();
  }
  // Answers request `id` (1-based, in sending order), then turns the loop.
  void Answer(vpic::UpstreamClient::RequestId id, vpic::HttpResult r) {
    upstream_->Reply(id, std::move(r));
    Turn();
  }
  void AnswerOk(vpic::UpstreamClient::RequestId id) {
    Answer(id, upstream_->Ok(id));
  }
  // Whether the engine holds nothing: no flight, waiter, wake-up or request.
  bool Idle() const {
    const EngineStats s = engine_->Stats();
    return s.flights == 0 && s.waiters == 0 && s.pending_wakeups == 0 &&
           s.upstream_active == 0;
  }
  // A refused Submit (the listener is never called).
  Admission Refused(const std::string& vin) {
    DecodeRequest r;
    r.vin = vin;
    testing_util::RecordingListener unused;
    const Admission a = engine_->Submit(r, &unused);
    EXPECT_TRUE(unused.events().empty());
    return a;
  }
};

}  // namespace engine

#endif  // VIN_TESTS_ENGINE_ENGINE_RULES_FIXTURE_H_

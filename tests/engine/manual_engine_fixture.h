// The fixture of the engine tests on a fake clock (upstream_budget_test.cc,
// and the rule tests through engine_rules_fixture.h): an Engine whose loop
// the test turns (LoopMode::kManual) on a retry::FakeClock, in front of a
// ScriptedUpstream.
// Nothing sleeps: time moves when the test advances the clock, and the
// engine works when the test turns its loop, all on the test's thread.
//
// Every caller's events are recorded with their fake time. After each test
// the engine is destroyed (failing what still waits) and every caller must
// have had exactly one terminal event, its last.
#ifndef VIN_TESTS_ENGINE_MANUAL_ENGINE_FIXTURE_H_
#define VIN_TESTS_ENGINE_MANUAL_ENGINE_FIXTURE_H_

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/engine.h"
#include "gtest/gtest.h"
#include "retry/clock.h"
#include "retry/jitter.h"
#include "testing/recording_listener.h"
#include "testing/scripted_upstream.h"

namespace engine {

// Whether `l` had exactly one terminal event (DONE or FAILED), and it last.
inline testing::AssertionResult OneTerminalEvent(
    const testing_util::RecordingListener& l) {
  const std::vector<std::string> kinds = l.kinds();
  int terminal = 0;
  for (const std::string& k : kinds) terminal += k == "done" || k == "failed";
  const bool last_is_terminal =
      !kinds.empty() && (kinds.back() == "done" || kinds.back() == "failed");
  if (terminal == 1 && last_is_terminal) return testing::AssertionSuccess();
  std::string seen;
  for (const std::string& k : kinds) seen += (seen.empty() ? "" : ", ") + k;
  return testing::AssertionFailure()
         << terminal << " terminal events, events: [" << seen << "]";
}

class ManualEngineTest : public testing::Test {
 protected:
  void TearDown() override {
    engine_.reset();  // Shutdown: whoever still waits gets SHUTTING_DOWN
    for (size_t i = 0; i < listeners_.size(); ++i) {
      EXPECT_TRUE(OneTerminalEvent(*listeners_[i])) << "caller " << i;
    }
  }

  // A jitter source for exact times: 0.05, 0.15, ..., 0.95, then again, one
  // draw per delay (so different flights draw different jitter).
  static retry::Jitter::Uniform Cycling() {
    return [n = 0]() mutable { return 0.05 + 0.1 * (n++ % 10); };
  }

  // A new engine on the fake clock (options.uniform empty: the engine's own
  // random jitter), replacing any earlier one.
  void Make(EngineOptions o) {
    o.clock = &clock_;
    auto upstream = std::make_unique<testing_util::ScriptedUpstream>(&clock_);
    upstream_ = upstream.get();
    auto e =
        Engine::Create(std::move(o), std::move(upstream), LoopMode::kManual);
    ASSERT_TRUE(e.ok()) << e.status();
    engine_ = *std::move(e);
    t0_ = clock_.Now();
  }

  testing_util::RecordingListener* Submit(const DecodeRequest& r) {
    listeners_.push_back(
        std::make_unique<testing_util::RecordingListener>(&clock_));
    const Admission admitted = engine_->Submit(r, listeners_.back().get());
    EXPECT_TRUE(admitted.ok()) << admitted.failure().message;
    if (admitted.ok()) ids_[listeners_.back().get()] = admitted.id();
    return listeners_.back().get();
  }
  testing_util::RecordingListener* Submit(
      const std::string& vin,
      absl::Duration timeout = absl::InfiniteDuration()) {
    DecodeRequest r;
    r.vin = vin;
    r.timeout = timeout;
    return Submit(r);
  }
  // The caller of `l` cancels (Engine::Cancel; the loop sees it next turn).
  void Cancel(const testing_util::RecordingListener* l) {
    engine_->Cancel(ids_.at(l));
  }

  void Turn() {
    for (int i = 0; i < 3; ++i) engine_->RunOnce();
  }
  // Moves the clock in 10 ms steps, running the loop at each, answering
  // every request that is open with `reply` when given.
  template <typename Fn>
  void Run(absl::Duration d, Fn reply) {
    const absl::Time end = clock_.Now() + d;
    while (clock_.Now() < end) {
      upstream_->ReplyAll(reply);
      Turn();
      clock_.Advance(absl::Milliseconds(10));
    }
    upstream_->ReplyAll(reply);
    Turn();
  }
  void RunAnsweringOk(absl::Duration d) {
    Run(d, [this](vpic::UpstreamClient::RequestId id) {
      return upstream_->Ok(id);
    });
  }

  // When each request was sent, relative to the start.
  std::vector<absl::Duration> SendTimes() const {
    std::vector<absl::Duration> out;
    for (const auto& s : upstream_->sent()) out.push_back(s.at - t0_);
    return out;
  }
  std::vector<std::string> SentVins() const {
    std::vector<std::string> out;
    for (const auto& s : upstream_->sent()) {
      for (const auto& e : s.entries) out.push_back(e.vin);
    }
    return out;
  }

  retry::FakeClock clock_{absl::UnixEpoch() + absl::Hours(10)};
  testing_util::ScriptedUpstream* upstream_ = nullptr;  // engine_'s
  // Before engine_: the engine's destructor still calls them.
  std::vector<std::unique_ptr<testing_util::RecordingListener>> listeners_;
  std::map<const testing_util::RecordingListener*, Engine::WaiterId> ids_;
  std::unique_ptr<Engine> engine_;
  absl::Time t0_;  // when the engine was made
};

}  // namespace engine

#endif  // VIN_TESTS_ENGINE_MANUAL_ENGINE_FIXTURE_H_
